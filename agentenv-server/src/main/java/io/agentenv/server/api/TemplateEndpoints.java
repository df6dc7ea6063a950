package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import io.agentenv.api.model.AssignTemplateTagsRequest;
import io.agentenv.api.model.AssignedTemplateTags;
import io.agentenv.api.model.DeleteTemplateTagsRequest;
import io.agentenv.api.model.Template;
import io.agentenv.api.model.TemplateAliasResponse;
import io.agentenv.api.model.TemplateBuild;
import io.agentenv.api.model.TemplateBuildStatus;
import io.agentenv.api.model.TemplateTag;
import io.agentenv.api.model.TemplateWithBuilds;
import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.orchestrator.BuildRecord;
import io.agentenv.orchestrator.Cursor;
import io.agentenv.orchestrator.ErrorKind;
import io.agentenv.orchestrator.Orchestrator;
import io.agentenv.orchestrator.Page;
import io.agentenv.orchestrator.TemplateRegistry;
import io.agentenv.orchestrator.TemplateView;
import io.agentenv.spi.Resources;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * E2B's template routes other than builds ({@link TemplateBuildEndpoints}): the lists, one template with its builds,
 * the alias check, delete and tags. The lists hold the templates of the build API (by their template id, with their
 * latest build) and the backend's built-in templates; snapshots are listed by {@code GET /snapshots}. A single template
 * is looked up among the build API's templates first, then as a create resolves its {@code templateID} (a built-in
 * template, or a snapshot by id or name); delete does the same, so it also deletes a snapshot.
 */
final class TemplateEndpoints {
    /** Every name a create accepts (snapshot names, built-in template ids), optionally with a {@code :tag}. */
    private static final Pattern ALIAS = Pattern.compile("[A-Za-z0-9_.-]{1,128}(:[A-Za-z0-9_.-]{1,128})?");

    private final Orchestrator orchestrator;
    private final TemplateRegistry registry;
    private final Json json;

    TemplateEndpoints(Orchestrator orchestrator, TemplateRegistry registry, Json json) {
        this.orchestrator = requireNonNull(orchestrator, "orchestrator is null");
        this.registry = requireNonNull(registry, "registry is null");
        this.json = requireNonNull(json, "json is null");
    }

    void register(Router router) {
        // the literal /templates/tags before /templates/{templateID}: the first matching route wins
        router.add("POST", "/templates/tags", this::assignTags)
                .add("DELETE", "/templates/tags", this::removeTags)
                .add("GET", "/templates", this::listV1)
                .add("GET", "/v2/templates", this::listV2)
                .add("GET", "/templates/aliases/{alias}", this::alias)
                .add("GET", "/templates/{templateID}", this::get)
                .add("DELETE", "/templates/{templateID}", this::delete)
                .add("GET", "/templates/{templateID}/tags", this::tags);
    }

    /** A listed template and where it sorts (newest first by build time, then id). */
    private record Listed(Template template, Instant sortTime) {}

    /** Deprecated v1 list: every template in one response ({@code teamID} is ignored: deployments are single-tenant). */
    private Reply listV1(Exchange ex) {
        return new Reply.Json(200, all().stream().map(Listed::template).toList());
    }

    private Reply listV2(Exchange ex) {
        int limit = ListEndpoints.limit(ex.queryValue("limit"));
        Optional<Cursor> after =
                ex.queryValue("nextToken").filter(t -> !t.isEmpty()).map(PageToken::decode);
        List<Listed> remaining = all().stream()
                .filter(l ->
                        after.isEmpty() || isAfter(l.sortTime(), l.template().templateID(), after.get()))
                .toList();
        List<Listed> page = remaining.subList(0, Math.min(limit, remaining.size()));
        Optional<Cursor> next = remaining.size() > limit
                ? Optional.of(new Cursor(
                        page.getLast().sortTime(), page.getLast().template().templateID()))
                : Optional.empty();
        return ListEndpoints.paged(page.stream().map(Listed::template).toList(), next);
    }

    /** The build API's templates and the built-in ones, newest first by (build time, id). */
    private List<Listed> all() {
        List<Listed> all = new ArrayList<>();
        for (TemplateRegistry.Built built : registry.templates()) {
            all.add(new Listed(template(built), built.template().createdAt()));
        }
        Optional<Cursor> after = Optional.empty();
        do {
            Page<TemplateView> page = orchestrator.listTemplates(ListEndpoints.MAX_LIMIT, after);
            page.items()
                    .forEach(t -> all.add(new Listed(template(t), t.createdAt().orElse(Instant.EPOCH))));
            after = page.next();
        } while (after.isPresent());
        all.sort(Comparator.comparing(Listed::sortTime)
                .thenComparing(l -> l.template().templateID())
                .reversed());
        return all;
    }

    /** In newest-first order, strictly after the cursor. */
    private static boolean isAfter(Instant time, String id, Cursor cursor) {
        int byTime = time.compareTo(cursor.at());
        return byTime < 0 || (byTime == 0 && id.compareTo(cursor.id()) < 0);
    }

    /** One template with its builds, newest first, {@code limit} per page and a token while more remain. */
    private Reply get(Exchange ex) {
        String reference = ex.param("templateID");
        int limit = ListEndpoints.limit(ex.queryValue("limit"));
        Optional<Cursor> after =
                ex.queryValue("nextToken").filter(t -> !t.isEmpty()).map(PageToken::decode);
        Optional<TemplateRegistry.Built> built = registry.find(reference);
        if (built.isPresent()) {
            return builtWithBuilds(built.get(), limit, after);
        }
        TemplateView view = orchestrator.findTemplate(reference).orElseThrow(() -> notFound(reference));
        List<TemplateBuild> builds = after.isPresent() ? List.of() : List.of(build(view));
        return new Reply.Json(
                200,
                new TemplateWithBuilds(
                        view.id().value(),
                        true,
                        view.aliases(),
                        names(view),
                        view.createdAt().orElse(null),
                        view.updatedAt().orElse(null),
                        builds));
    }

    private Reply builtWithBuilds(TemplateRegistry.Built built, int limit, Optional<Cursor> after) {
        List<BuildRecord> remaining = built.builds().stream()
                .filter(b -> after.isEmpty() || isAfter(b.createdAt(), b.id(), after.get()))
                .toList();
        List<BuildRecord> page = remaining.subList(0, Math.min(limit, remaining.size()));
        Map<String, String> headers = remaining.size() > limit
                ? Map.of(
                        ListEndpoints.NEXT_TOKEN_HEADER,
                        PageToken.encode(new Cursor(
                                page.getLast().createdAt(), page.getLast().id())))
                : Map.of();
        Resources resources = built.template().resources();
        return new Reply.Json(
                200,
                new TemplateWithBuilds(
                        built.template().id().value(),
                        true,
                        built.template().names(),
                        names(built),
                        built.template().createdAt(),
                        built.updatedAt(),
                        page.stream().map(b -> build(b, resources)).toList()),
                headers);
    }

    /** E2B's alias check: the template id a name (or {@code name:tag}) stands for. */
    private Reply alias(Exchange ex) {
        String alias = ex.param("alias");
        if (!ALIAS.matcher(alias).matches()) {
            throw AgentEnvException.invalidArgument(
                    "template alias must be 1-128 letters, digits, '_', '.' or '-', optionally with a :tag");
        }
        // a template whose builds all failed (or are still running) has nothing to create sandboxes from yet
        Optional<TemplateRegistry.Built> built = registry.findTagged(alias)
                .filter(b -> b.builds().stream().anyMatch(r -> r.status() == BuildRecord.Status.READY));
        if (built.isPresent()) {
            return new Reply.Json(
                    200, new TemplateAliasResponse(built.get().template().id().value(), true));
        }
        TemplateView view = orchestrator
                .findTemplate(alias)
                .filter(t -> t.aliases().contains(alias))
                .orElseThrow(
                        () -> new AgentEnvException(ErrorKind.NOT_FOUND, "template alias " + alias + " not found"));
        return new Reply.Json(200, new TemplateAliasResponse(view.id().value(), true));
    }

    /** A template of the build API (409 while it is in use), else a snapshot by id or name. */
    private Reply delete(Exchange ex) {
        String reference = ex.param("templateID");
        if (!registry.delete(reference) && !orchestrator.deleteTemplate(reference)) {
            throw notFound(reference);
        }
        return Reply.NO_CONTENT;
    }

    private Reply tags(Exchange ex) {
        String reference = ex.param("templateID");
        if (registry.find(reference).isEmpty()) {
            // a built-in template or a snapshot has no tags
            if (orchestrator.findTemplate(reference).isEmpty()) {
                throw notFound(reference);
            }
            return new Reply.Json(200, List.of());
        }
        return new Reply.Json(
                200,
                registry.tags(reference).stream()
                        .map(t -> new TemplateTag(t.tag(), t.buildId(), t.assignedAt()))
                        .toList());
    }

    private Reply assignTags(Exchange ex) {
        AssignTemplateTagsRequest body = json.read(ex.body(), AssignTemplateTagsRequest.class, false);
        TemplateRegistry.Assigned assigned = registry.assign(body.target(), body.tags());
        return new Reply.Json(201, new AssignedTemplateTags(assigned.buildId(), assigned.tags()));
    }

    private Reply removeTags(Exchange ex) {
        DeleteTemplateTagsRequest body = json.read(ex.body(), DeleteTemplateTagsRequest.class, false);
        registry.remove(body.name(), body.tags());
        return Reply.NO_CONTENT;
    }

    private static AgentEnvException notFound(String reference) {
        return new AgentEnvException(
                ErrorKind.NOT_FOUND, "template " + SandboxEndpoints.clip(reference) + " not found");
    }

    /** A template of the build API: its latest ready build's id (else its latest build's) and latest status. */
    static Template template(TemplateRegistry.Built built) {
        Resources resources = built.template().resources();
        Optional<BuildRecord> latest = built.latest();
        String buildId = built.latestReady()
                .or(() -> latest)
                .map(BuildRecord::id)
                .orElse(built.template().id().value());
        return new Template(
                built.template().id().value(),
                buildId,
                resources.cpuCount(),
                resources.memoryMiB(),
                resources.diskSizeMiB(),
                true,
                built.template().names(),
                names(built),
                built.template().createdAt(),
                built.updatedAt(),
                built.builds().size(),
                WireMapping.ENVD_VERSION,
                latest.map(b -> status(b.status())).orElse(TemplateBuildStatus.WAITING));
    }

    static Template template(TemplateView view) {
        return new Template(
                view.id().value(),
                view.id().value(),
                view.resources().cpuCount(),
                view.resources().memoryMiB(),
                view.resources().diskSizeMiB(),
                true,
                view.aliases(),
                names(view),
                view.createdAt().orElse(null),
                view.updatedAt().orElse(null),
                1,
                WireMapping.ENVD_VERSION,
                TemplateBuildStatus.READY);
    }

    private static TemplateBuild build(TemplateView view) {
        return new TemplateBuild(
                view.id().value(),
                TemplateBuildStatus.READY,
                view.createdAt().orElse(null),
                view.updatedAt().orElse(null),
                view.resources().cpuCount(),
                view.resources().memoryMiB(),
                view.resources().diskSizeMiB(),
                WireMapping.ENVD_VERSION,
                view.updatedAt().orElse(null));
    }

    private static TemplateBuild build(BuildRecord build, Resources resources) {
        return new TemplateBuild(
                build.id(),
                status(build.status()),
                build.createdAt(),
                build.updatedAt(),
                resources.cpuCount(),
                resources.memoryMiB(),
                resources.diskSizeMiB(),
                WireMapping.ENVD_VERSION,
                build.status().finished() ? build.updatedAt() : null);
    }

    static TemplateBuildStatus status(BuildRecord.Status status) {
        return switch (status) {
            case WAITING -> TemplateBuildStatus.WAITING;
            case BUILDING -> TemplateBuildStatus.BUILDING;
            case READY -> TemplateBuildStatus.READY;
            case ERROR -> TemplateBuildStatus.ERROR;
        };
    }

    /** E2B's {@code names}: the aliases, or the id when there is none. */
    private static List<String> names(TemplateView view) {
        return view.aliases().isEmpty() ? List.of(view.id().value()) : view.aliases();
    }

    private static List<String> names(TemplateRegistry.Built built) {
        List<String> names = built.template().names();
        return names.isEmpty() ? List.of(built.template().id().value()) : names;
    }
}
