package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import io.agentenv.api.model.SandboxLog;
import io.agentenv.api.model.SandboxLogEntry;
import io.agentenv.api.model.SandboxLogs;
import io.agentenv.api.model.SandboxLogsV2Response;
import io.agentenv.api.model.SandboxMetric;
import io.agentenv.api.model.SandboxVolumeUsage;
import io.agentenv.api.model.SandboxesWithMetrics;
import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.orchestrator.LogQuery;
import io.agentenv.orchestrator.SandboxGuests;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.EnvdMetrics;
import io.agentenv.spi.SandboxId;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Routes answered from the sandbox's guest agent: metrics (E2B's {@code SandboxMetric} shape, from the sampled history)
 * and logs (envd's own log and the processes' output). Register before {@link SandboxEndpoints}, so that
 * {@code /sandboxes/metrics} is not taken for a sandbox id.
 */
final class GuestEndpoints {
    static final int MAX_METRICS_IDS = 100;

    private final SandboxGuests guests;

    /** The usage of each volume a sandbox mounts, now (empty for none, or a sandbox that is gone). */
    private final Function<SandboxId, List<SandboxVolumeUsage>> volumeUsage;

    GuestEndpoints(SandboxGuests guests, Function<SandboxId, List<SandboxVolumeUsage>> volumeUsage) {
        this.guests = requireNonNull(guests, "guests is null");
        this.volumeUsage = requireNonNull(volumeUsage, "volumeUsage is null");
    }

    void register(Router router) {
        router.add("GET", "/sandboxes/metrics", this::metricsOfMany)
                .add("GET", "/sandboxes/{id}/metrics", this::metrics)
                .add("GET", "/sandboxes/{id}/logs", this::logsV1)
                .add("GET", "/v2/sandboxes/{id}/logs", this::logsV2);
    }

    /** {@code ?start=&end=} in Unix seconds, both optional. */
    private Reply metrics(Exchange ex) {
        SandboxId id = SandboxEndpoints.sandboxId(ex);
        Optional<Instant> start = seconds(ex, "start");
        Optional<Instant> end = seconds(ex, "end");
        List<SandboxMetric> body = new ArrayList<>(guests.metrics(id, start, end).stream()
                .map(GuestEndpoints::metric)
                .toList());
        if (!body.isEmpty()) { // the newest item carries the volumes' usage as of now
            body.set(body.size() - 1, body.getLast().withVolumes(volumeUsage.apply(id)));
        }
        return new Reply.Json(200, body);
    }

    /** {@code ?sandbox_ids=a,b} (comma-separated, or the parameter repeated), at most 100. */
    private Reply metricsOfMany(Exchange ex) {
        Set<String> raw = new LinkedHashSet<>();
        for (String value : ex.queryValues("sandbox_ids")) {
            for (String part : value.split(",", -1)) {
                if (!part.isBlank()) {
                    raw.add(part.strip());
                }
            }
        }
        if (raw.isEmpty()) {
            throw AgentEnvException.invalidArgument("sandbox_ids is required");
        }
        if (raw.size() > MAX_METRICS_IDS) {
            throw AgentEnvException.invalidArgument("sandbox_ids may name at most " + MAX_METRICS_IDS + " sandboxes");
        }
        List<SandboxId> ids =
                raw.stream().filter(SandboxId::isValid).map(SandboxId::new).toList();
        Map<String, SandboxMetric> out = new LinkedHashMap<>();
        guests.latestMetrics(ids)
                .forEach((id, m) -> out.put(id.value(), metric(m).withVolumes(volumeUsage.apply(id))));
        return new Reply.Json(200, new SandboxesWithMetrics(out));
    }

    /** Deprecated v1: {@code ?start=<ms>&limit=<n>}, oldest first. */
    private Reply logsV1(Exchange ex) {
        SandboxId id = SandboxEndpoints.sandboxId(ex);
        LogQuery query = new LogQuery(
                millis(ex, "start"), limit(ex), LogQuery.Direction.FORWARD, LogQuery.Level.DEBUG, Optional.empty());
        List<EnvdLogEntry> entries = guests.logs(id, query);
        List<SandboxLog> lines = new ArrayList<>(entries.size());
        List<SandboxLogEntry> structured = new ArrayList<>(entries.size());
        for (EnvdLogEntry e : entries) {
            lines.add(new SandboxLog(e.timestamp().toString(), e.message()));
            structured.add(entry(e));
        }
        return new Reply.Json(200, new SandboxLogs(lines, structured));
    }

    /** v2: {@code ?cursor=<ms>&limit=<n>&direction=forward|backward&level=debug|info|warn|error&search=<text>}. */
    private Reply logsV2(Exchange ex) {
        SandboxId id = SandboxEndpoints.sandboxId(ex);
        LogQuery.Direction direction = ex.queryValue("direction")
                .map(d -> switch (d) {
                    case "forward" -> LogQuery.Direction.FORWARD;
                    case "backward" -> LogQuery.Direction.BACKWARD;
                    default -> throw AgentEnvException.invalidArgument("direction must be forward or backward");
                })
                .orElse(LogQuery.Direction.FORWARD);
        LogQuery.Level level = ex.queryValue("level")
                .map(l -> switch (l) {
                    case "debug" -> LogQuery.Level.DEBUG;
                    case "info" -> LogQuery.Level.INFO;
                    case "warn" -> LogQuery.Level.WARN;
                    case "error" -> LogQuery.Level.ERROR;
                    default -> throw AgentEnvException.invalidArgument("level must be debug, info, warn or error");
                })
                .orElse(LogQuery.Level.DEBUG);
        Optional<String> search = ex.queryValue("search").filter(s -> !s.isEmpty());
        LogQuery query = new LogQuery(millis(ex, "cursor"), limit(ex), direction, level, search);
        return new Reply.Json(
                200,
                new SandboxLogsV2Response(guests.logs(id, query).stream()
                        .map(GuestEndpoints::entry)
                        .toList()));
    }

    static SandboxMetric metric(EnvdMetrics m) {
        return new SandboxMetric(
                m.timestamp().toString(),
                m.timestamp().getEpochSecond(),
                m.cpuCount(),
                m.cpuUsedPct(),
                m.memUsed(),
                m.memTotal(),
                m.memCache(),
                m.diskUsed(),
                m.diskTotal());
    }

    static SandboxLogEntry entry(EnvdLogEntry e) {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("source", e.source().name().toLowerCase(Locale.ROOT));
        e.pid().ifPresent(pid -> fields.put("pid", Integer.toString(pid)));
        fields.put(e.source() == EnvdLogEntry.Source.ENVD ? "logger" : "stream", e.stream());
        return new SandboxLogEntry(
                e.timestamp().toString(), LogQuery.Level.ofEnvd(e.level()).wire(), e.message(), fields);
    }

    private static int limit(Exchange ex) {
        long n = number(ex, "limit").orElse((long) LogQuery.MAX_LIMIT);
        if (n < 1 || n > LogQuery.MAX_LIMIT) {
            throw AgentEnvException.invalidArgument("limit must be between 1 and " + LogQuery.MAX_LIMIT);
        }
        return (int) n;
    }

    private static Optional<Instant> seconds(Exchange ex, String name) {
        return number(ex, name).map(Instant::ofEpochSecond);
    }

    private static Optional<Instant> millis(Exchange ex, String name) {
        return number(ex, name).map(Instant::ofEpochMilli);
    }

    private static Optional<Long> number(Exchange ex, String name) {
        return ex.queryValue(name).map(value -> {
            try {
                long n = Long.parseLong(value);
                if (n < 0 || n > 1L << 45) {
                    throw AgentEnvException.invalidArgument("query parameter '" + name + "' is out of range");
                }
                return n;
            } catch (NumberFormatException e) {
                throw AgentEnvException.invalidArgument("query parameter '" + name + "' must be an integer");
            }
        });
    }
}
