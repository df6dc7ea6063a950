package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import io.agentenv.api.model.ListedSandbox;
import io.agentenv.api.model.SandboxSnapshotRequest;
import io.agentenv.api.model.SnapshotInfo;
import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.orchestrator.Cursor;
import io.agentenv.orchestrator.Orchestrator;
import io.agentenv.orchestrator.Page;
import io.agentenv.orchestrator.SandboxQuery;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.orchestrator.SandboxView;
import io.agentenv.orchestrator.SnapshotQuery;
import io.agentenv.orchestrator.SnapshotView;
import io.agentenv.orchestrator.SortOrder;
import io.agentenv.spi.SandboxId;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Listing routes (sandboxes v1 and v2, snapshots) and taking a snapshot; a snapshot is deleted by
 * {@code DELETE /templates/{templateID}} ({@link TemplateEndpoints}).
 */
final class ListEndpoints {
    static final String NEXT_TOKEN_HEADER = "X-Next-Token";
    static final int MAX_LIMIT = 100;

    private final Orchestrator orchestrator;
    private final WireMapping wire;
    private final Json json;

    ListEndpoints(Orchestrator orchestrator, WireMapping wire, Json json) {
        this.orchestrator = requireNonNull(orchestrator, "orchestrator is null");
        this.wire = requireNonNull(wire, "wire is null");
        this.json = requireNonNull(json, "json is null");
    }

    void register(Router router) {
        router.add("GET", "/sandboxes", this::listV1)
                .add("GET", "/v2/sandboxes", this::listV2)
                .add("POST", "/sandboxes/{id}/snapshots", this::snapshot)
                .add("GET", "/snapshots", this::listSnapshots);
    }

    /** Deprecated v1 list: running sandboxes only, optional metadata filter, everything in one response. */
    private Reply listV1(Exchange ex) {
        Map<String, String> metadata =
                ex.queryValue("metadata").map(MetadataFilter::decode).orElse(Map.of());
        SandboxQuery query = new SandboxQuery(
                WireMapping.expand(io.agentenv.api.model.SandboxState.RUNNING),
                metadata,
                Optional.empty(),
                Optional.empty(),
                SortOrder.DESC,
                1000,
                Optional.empty());
        List<ListedSandbox> all = new ArrayList<>();
        while (true) {
            Page<SandboxView> page = orchestrator.list(query);
            page.items().forEach(v -> all.add(wire.listed(v)));
            if (page.next().isEmpty()) {
                return new Reply.Json(200, all);
            }
            query = new SandboxQuery(
                    query.states(), metadata, Optional.empty(), Optional.empty(), SortOrder.DESC, 1000, page.next());
        }
    }

    private Reply listV2(Exchange ex) {
        Map<String, String> metadata =
                ex.queryValue("metadata").map(MetadataFilter::decode).orElse(Map.of());
        SandboxQuery query = new SandboxQuery(
                states(ex.queryValues("state")),
                metadata,
                ex.queryValue("template").filter(t -> !t.isEmpty()),
                ex.queryValue("startedAfter").map(ListEndpoints::instant),
                order(ex.queryValue("order")),
                limit(ex.queryValue("limit")),
                ex.queryValue("nextToken").filter(t -> !t.isEmpty()).map(PageToken::decode));
        Page<SandboxView> page = orchestrator.list(query);
        return paged(page.items().stream().map(wire::listed).toList(), page.next());
    }

    private Reply snapshot(Exchange ex) {
        SandboxId id = SandboxEndpoints.sandboxId(ex);
        SandboxSnapshotRequest body = json.read(ex.body(), SandboxSnapshotRequest.class, true);
        SnapshotView view = orchestrator.snapshot(id, Optional.ofNullable(body.name()));
        return new Reply.Json(201, WireMapping.snapshot(view));
    }

    private Reply listSnapshots(Exchange ex) {
        Optional<SandboxId> sandbox = ex.queryValue("sandboxID")
                .filter(s -> !s.isEmpty())
                .map(s -> {
                    if (!SandboxId.isValid(s)) {
                        throw AgentEnvException.invalidArgument("sandboxID is not a sandbox id");
                    }
                    return new SandboxId(s);
                });
        Optional<String> name = ex.queryValue("name").filter(s -> !s.isEmpty()).map(ListEndpoints::bareName);
        SnapshotQuery query = new SnapshotQuery(
                sandbox,
                name,
                limit(ex.queryValue("limit")),
                ex.queryValue("nextToken").filter(t -> !t.isEmpty()).map(PageToken::decode));
        Page<SnapshotView> page = orchestrator.listSnapshots(query);
        List<SnapshotInfo> items =
                page.items().stream().map(WireMapping::snapshot).toList();
        return paged(items, page.next());
    }

    static Reply paged(List<?> items, Optional<Cursor> next) {
        return new Reply.Json(
                200,
                items,
                next.map(c -> Map.of(NEXT_TOKEN_HEADER, PageToken.encode(c))).orElse(Map.of()));
    }

    /** {@code state} is a CSV (possibly repeated); absent means running and paused. */
    static Set<SandboxState> states(List<String> values) {
        Set<SandboxState> states = EnumSet.noneOf(SandboxState.class);
        boolean any = false;
        for (String value : values) {
            for (String part : value.split(",")) {
                if (part.isBlank()) {
                    continue;
                }
                any = true;
                io.agentenv.api.model.SandboxState wireState = io.agentenv.api.model.SandboxState.fromWire(part)
                        .orElseThrow(() -> AgentEnvException.invalidArgument(
                                "state must be 'running' or 'paused', was '" + SandboxEndpoints.clip(part) + "'"));
                states.addAll(WireMapping.expand(wireState));
            }
        }
        return any ? states : SandboxState.visible();
    }

    static int limit(Optional<String> value) {
        if (value.isEmpty() || value.get().isEmpty()) {
            return MAX_LIMIT;
        }
        try {
            int limit = Integer.parseInt(value.get());
            if (limit >= 1 && limit <= MAX_LIMIT) {
                return limit;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw AgentEnvException.invalidArgument("limit must be an integer between 1 and " + MAX_LIMIT);
    }

    static SortOrder order(Optional<String> value) {
        return switch (value.map(v -> v.toLowerCase(Locale.ROOT)).orElse("desc")) {
            case "desc", "" -> SortOrder.DESC;
            case "asc" -> SortOrder.ASC;
            default -> throw AgentEnvException.invalidArgument("order must be 'asc' or 'desc'");
        };
    }

    /** Bounds of a meaningful startedAfter (the store keeps nanoseconds in a long); outside them the answer is the same. */
    private static final Instant EARLIEST = Instant.EPOCH;

    private static final Instant LATEST = Instant.parse("2200-01-01T00:00:00Z");

    static Instant instant(String value) {
        try {
            Instant at = OffsetDateTime.parse(value).toInstant();
            return at.isBefore(EARLIEST) ? EARLIEST : at.isAfter(LATEST) ? LATEST : at;
        } catch (DateTimeParseException e) {
            throw AgentEnvException.invalidArgument(
                    "startedAfter must be an ISO-8601 date-time, e.g. 2026-01-01T00:00:00Z");
        }
    }

    /** E2B snapshot names may come as {@code team/name:tag}; the catalog knows the bare name. */
    static String bareName(String name) {
        String bare = name.substring(name.lastIndexOf('/') + 1);
        int colon = bare.indexOf(':');
        return colon >= 0 ? bare.substring(0, colon) : bare;
    }
}
