package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import io.agentenv.api.model.Template;
import io.agentenv.api.model.TemplateAliasResponse;
import io.agentenv.api.model.TemplateBuild;
import io.agentenv.api.model.TemplateBuildStatus;
import io.agentenv.api.model.TemplateWithBuilds;
import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.orchestrator.Cursor;
import io.agentenv.orchestrator.ErrorKind;
import io.agentenv.orchestrator.Orchestrator;
import io.agentenv.orchestrator.Page;
import io.agentenv.orchestrator.TemplateView;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * E2B's template read routes. The lists hold the backend's built-in templates (snapshots are listed by
 * {@code GET /snapshots}); a single template or an alias is looked up the way a create resolves its
 * {@code templateID}, so a snapshot id or name works there too (as for {@code DELETE /templates/{id}}). Each template
 * has exactly one build whose id is the template's id. Builds are {@link TemplateBuildEndpoints}'.
 */
final class TemplateEndpoints {
    /** Every name a create accepts: snapshot names ({@code [A-Za-z0-9_-]}) and built-in template ids (also {@code .}). */
    private static final Pattern ALIAS = Pattern.compile("[A-Za-z0-9_.-]{1,128}");

    private final Orchestrator orchestrator;

    TemplateEndpoints(Orchestrator orchestrator) {
        this.orchestrator = requireNonNull(orchestrator, "orchestrator is null");
    }

    void register(Router router) {
        router.add("GET", "/templates", this::listV1)
                .add("GET", "/v2/templates", this::listV2)
                .add("GET", "/templates/aliases/{alias}", this::alias)
                .add("GET", "/templates/{templateID}", this::get);
    }

    /** Deprecated v1 list: every template in one response ({@code teamID} is ignored: deployments are single-tenant). */
    private Reply listV1(Exchange ex) {
        List<Template> all = new ArrayList<>();
        Optional<Cursor> after = Optional.empty();
        do {
            Page<TemplateView> page = orchestrator.listTemplates(ListEndpoints.MAX_LIMIT, after);
            page.items().forEach(t -> all.add(template(t)));
            after = page.next();
        } while (after.isPresent());
        return new Reply.Json(200, all);
    }

    private Reply listV2(Exchange ex) {
        Page<TemplateView> page = orchestrator.listTemplates(
                ListEndpoints.limit(ex.queryValue("limit")),
                ex.queryValue("nextToken").filter(t -> !t.isEmpty()).map(PageToken::decode));
        return ListEndpoints.paged(
                page.items().stream().map(TemplateEndpoints::template).toList(), page.next());
    }

    /** One template with its single build; a {@code nextToken} pages past that build (E2B pages builds here). */
    private Reply get(Exchange ex) {
        String idOrAlias = ex.param("templateID");
        int limit = ListEndpoints.limit(ex.queryValue("limit"));
        boolean pastFirstPage = ex.queryValue("nextToken")
                .filter(t -> !t.isEmpty())
                .map(PageToken::decode)
                .isPresent();
        TemplateView view = orchestrator.findTemplate(idOrAlias).orElseThrow(() -> notFound(idOrAlias));
        List<TemplateBuild> builds =
                pastFirstPage ? List.of() : List.of(build(view)).subList(0, Math.min(1, limit));
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

    private Reply alias(Exchange ex) {
        String alias = ex.param("alias");
        if (!ALIAS.matcher(alias).matches()) {
            throw AgentEnvException.invalidArgument("template alias must be 1-128 letters, digits, '_', '.' or '-'");
        }
        TemplateView view = orchestrator
                .findTemplate(alias)
                .filter(t -> t.aliases().contains(alias))
                .orElseThrow(
                        () -> new AgentEnvException(ErrorKind.NOT_FOUND, "template alias " + alias + " not found"));
        return new Reply.Json(200, new TemplateAliasResponse(view.id().value(), true));
    }

    private static AgentEnvException notFound(String idOrAlias) {
        return new AgentEnvException(
                ErrorKind.NOT_FOUND, "template " + SandboxEndpoints.clip(idOrAlias) + " not found");
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
                WireMapping.ENVD_VERSION);
    }

    /** E2B's {@code names}: the aliases, or the id when there is none. */
    private static List<String> names(TemplateView view) {
        return view.aliases().isEmpty() ? List.of(view.id().value()) : view.aliases();
    }
}
