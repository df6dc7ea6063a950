package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import io.agentenv.api.model.BuildLogEntry;
import io.agentenv.api.model.BuildStatusReason;
import io.agentenv.api.model.FromImageRegistry;
import io.agentenv.api.model.TemplateBuildInfo;
import io.agentenv.api.model.TemplateBuildRequestV3;
import io.agentenv.api.model.TemplateBuildStartV2;
import io.agentenv.api.model.TemplateBuildStatus;
import io.agentenv.api.model.TemplateRequestResponseV3;
import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.orchestrator.BuildLogLine;
import io.agentenv.orchestrator.BuildRecord;
import io.agentenv.orchestrator.ImageSource;
import io.agentenv.orchestrator.TemplateBuilder;
import io.agentenv.spi.Resources;
import io.agentenv.spi.TemplateId;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * E2B's template build routes, as the SDK's {@code Template.build} drives them: {@code POST /v3/templates} (a template
 * by name and a new build), {@code POST /v2/templates/{templateID}/builds/{buildID}} (its base and steps; the build
 * runs in the background) and {@code GET /templates/{templateID}/builds/{buildID}/status} (status, log entries from
 * {@code logsOffset}, the reason of a failure). The file uploads of COPY steps are {@link TemplateFileEndpoints}'.
 */
final class TemplateBuildEndpoints {
    private final TemplateBuilder builder;
    private final Json json;
    private final Supplier<Resources> defaults;

    /** @param defaults the resources of a template whose request names none (the built-in base's) */
    TemplateBuildEndpoints(TemplateBuilder builder, Json json, Supplier<Resources> defaults) {
        this.builder = requireNonNull(builder, "builder is null");
        this.json = requireNonNull(json, "json is null");
        this.defaults = requireNonNull(defaults, "defaults is null");
    }

    void register(Router router) {
        router.add("POST", "/v3/templates", this::request)
                .add("POST", "/v2/templates/{templateID}/builds/{buildID}", this::start)
                .add("GET", "/templates/{templateID}/builds/{buildID}/status", this::status);
    }

    private Reply request(Exchange ex) {
        TemplateBuildRequestV3 body = json.read(ex.body(), TemplateBuildRequestV3.class, false);
        Optional<String> name = Optional.ofNullable(body.name()).or(() -> Optional.ofNullable(body.alias()));
        Resources base = defaults.get();
        checkMinFreeDisk(body.minFreeDiskMb(), base.diskSizeMiB());
        Resources resources = new Resources(
                body.cpuCount() == null ? base.cpuCount() : body.cpuCount(),
                body.memoryMB() == null ? base.memoryMiB() : body.memoryMB(),
                base.diskSizeMiB());
        TemplateBuilder.Requested requested = builder.request(name, body.tags(), resources);
        return new Reply.Json(
                202,
                new TemplateRequestResponseV3(
                        requested.template().id().value(),
                        requested.build().id(),
                        requested.template().names(),
                        requested.template().names(),
                        requested.build().tags(),
                        false));
    }

    /**
     * E2B's {@code minFreeDiskMb}: the free disk a template's sandboxes have after its build steps. Here the steps' files
     * are layers under every sandbox's own disk, so each sandbox of the template starts with all of that disk free: a
     * minimum up to its size is met as it is, a larger one cannot be (INVALID_ARGUMENT, before anything is built).
     */
    private static void checkMinFreeDisk(Integer minFreeDiskMb, int diskMiB) {
        if (minFreeDiskMb == null) {
            return;
        }
        if (minFreeDiskMb < 0) {
            throw AgentEnvException.invalidArgument("minFreeDiskMb must be >= 0: " + minFreeDiskMb);
        }
        if (minFreeDiskMb > diskMiB) {
            throw AgentEnvException.invalidArgument("minFreeDiskMb " + minFreeDiskMb + " is more than the " + diskMiB
                    + " MiB disk a sandbox has on this server (the template's files are not on it: its sandboxes"
                    + " start with all of it free)");
        }
    }

    private Reply start(Exchange ex) {
        TemplateId template = templateId(ex.param("templateID"));
        TemplateBuildStartV2 body = json.read(ex.body(), TemplateBuildStartV2.class, false);
        List<TemplateBuilder.Step> steps = body.steps().stream()
                .map(s -> new TemplateBuilder.Step(
                        s.type(), s.args(), Optional.ofNullable(s.filesHash()), Boolean.TRUE.equals(s.force())))
                .toList();
        builder.start(
                template,
                ex.param("buildID"),
                new TemplateBuilder.BuildSpec(
                        nonEmpty(body.fromTemplate()),
                        nonEmpty(body.fromImage()),
                        credentials(body.fromImageRegistry()),
                        steps,
                        nonEmpty(body.startCmd()),
                        nonEmpty(body.readyCmd()),
                        Boolean.TRUE.equals(body.force())));
        return Reply.NO_CONTENT;
    }

    /**
     * Credentials of a {@code registry} kind; the cloud kinds ({@code aws}, {@code gcp}) need their providers' token
     * exchanges, which this server does not make: INVALID_ARGUMENT.
     */
    private static Optional<ImageSource.Credentials> credentials(FromImageRegistry registry) {
        if (registry == null) {
            return Optional.empty();
        }
        if (registry.type() != null && !registry.type().equals("registry")) {
            throw AgentEnvException.invalidArgument(
                    "fromImageRegistry of type " + registry.type() + " is not supported; use type registry");
        }
        if (registry.username() == null || registry.password() == null) {
            throw AgentEnvException.invalidArgument("fromImageRegistry needs username and password");
        }
        return Optional.of(new ImageSource.Credentials(registry.username(), registry.password()));
    }

    private Reply status(Exchange ex) {
        TemplateId template = templateId(ex.param("templateID"));
        int offset =
                ex.queryValue("logsOffset").map(TemplateBuildEndpoints::offset).orElse(0);
        TemplateBuilder.Status status = builder.status(template, ex.param("buildID"), offset);
        BuildRecord build = status.build();
        List<BuildLogEntry> entries =
                status.logs().stream().map(TemplateBuildEndpoints::entry).toList();
        BuildStatusReason reason = build.reason()
                .map(r -> new BuildStatusReason(r, build.step().orElse(null), List.of()))
                .orElse(null);
        return new Reply.Json(
                200,
                new TemplateBuildInfo(
                        build.template().value(), build.id(), status(build.status()), entries, List.of(), reason));
    }

    private static BuildLogEntry entry(BuildLogLine line) {
        return new BuildLogEntry(
                line.timestamp(),
                line.level().wire(),
                line.message(),
                line.step().orElse(null));
    }

    private static TemplateBuildStatus status(BuildRecord.Status status) {
        return switch (status) {
            case WAITING -> TemplateBuildStatus.WAITING;
            case BUILDING -> TemplateBuildStatus.BUILDING;
            case READY -> TemplateBuildStatus.READY;
            case ERROR -> TemplateBuildStatus.ERROR;
        };
    }

    private static int offset(String text) {
        try {
            int offset = Integer.parseInt(text);
            if (offset >= 0) {
                return offset;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw AgentEnvException.invalidArgument("logsOffset must be a non-negative integer");
    }

    private static TemplateId templateId(String text) {
        if (!TemplateId.isValid(text)) {
            throw AgentEnvException.invalidArgument("bad template id");
        }
        return new TemplateId(text);
    }

    private static Optional<String> nonEmpty(String text) {
        return Optional.ofNullable(text).filter(t -> !t.isBlank());
    }
}
