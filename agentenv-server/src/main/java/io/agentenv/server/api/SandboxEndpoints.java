package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import io.agentenv.api.model.ConnectSandbox;
import io.agentenv.api.model.CreateSandboxRequest;
import io.agentenv.api.model.NewSandbox;
import io.agentenv.api.model.NewSandboxV2;
import io.agentenv.api.model.PauseSandbox;
import io.agentenv.api.model.ResumedSandbox;
import io.agentenv.api.model.SandboxForkRequest;
import io.agentenv.api.model.SandboxNetworkConfig;
import io.agentenv.api.model.SandboxNetworkUpdateConfig;
import io.agentenv.api.model.SandboxRefresh;
import io.agentenv.api.model.SandboxTimeoutUpdate;
import io.agentenv.api.model.SandboxVolumeMount;
import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.orchestrator.ConnectResult;
import io.agentenv.orchestrator.CreateSandbox;
import io.agentenv.orchestrator.ErrorKind;
import io.agentenv.orchestrator.ForkResult;
import io.agentenv.orchestrator.Orchestrator;
import io.agentenv.orchestrator.PauseOutcome;
import io.agentenv.orchestrator.SandboxView;
import io.agentenv.orchestrator.TimeoutAction;
import io.agentenv.orchestrator.VolumeMountRequest;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The per-sandbox lifecycle routes: create, get, kill, pause, connect, resume, TTL, fork, network, extension params. */
final class SandboxEndpoints {
    private static final Logger log = LoggerFactory.getLogger(SandboxEndpoints.class);
    static final String SANDBOX_ID_HEADER = "x-agentenv-sandbox-id";

    /** API-side defaults applied when a request leaves a value out. */
    record Defaults(
            Duration createV1,
            Duration createV2,
            Duration connect,
            Duration resume,
            Duration setTimeout,
            Duration refresh) {
        Defaults {
            requireNonNull(createV1, "createV1 is null");
            requireNonNull(createV2, "createV2 is null");
            requireNonNull(connect, "connect is null");
            requireNonNull(resume, "resume is null");
            requireNonNull(setTimeout, "setTimeout is null");
            requireNonNull(refresh, "refresh is null");
        }
    }

    private final Orchestrator orchestrator;
    private final WireMapping wire;
    private final Json json;
    private final Defaults defaults;

    SandboxEndpoints(Orchestrator orchestrator, WireMapping wire, Json json, Defaults defaults) {
        this.orchestrator = requireNonNull(orchestrator, "orchestrator is null");
        this.wire = requireNonNull(wire, "wire is null");
        this.json = requireNonNull(json, "json is null");
        this.defaults = requireNonNull(defaults, "defaults is null");
    }

    void register(Router router) {
        router.add(
                        "POST",
                        "/sandboxes",
                        ex -> create(json.read(ex.body(), NewSandbox.class, false), defaults.createV1()))
                .add(
                        "POST",
                        "/v2/sandboxes",
                        ex -> create(json.read(ex.body(), NewSandboxV2.class, false), defaults.createV2()))
                .add("GET", "/sandboxes/{id}", this::get)
                .add("DELETE", "/sandboxes/{id}", this::kill)
                .add("POST", "/sandboxes/{id}/pause", this::pause)
                .add("POST", "/sandboxes/{id}/resume", this::resume)
                .add("POST", "/sandboxes/{id}/connect", this::connect)
                .add("POST", "/v2/sandboxes/{id}/connect", this::connect)
                .add("POST", "/sandboxes/{id}/timeout", this::setTimeout)
                .add("POST", "/sandboxes/{id}/refreshes", this::refresh)
                .add("POST", "/sandboxes/{id}/fork", this::fork)
                .add("PUT", "/sandboxes/{id}/network", this::updateNetwork)
                .add("GET", "/sandboxes/{id}/custom-extension-params", this::customExtensionParams)
                .add("PATCH", "/sandboxes/{id}/custom-extension-params", this::patchCustomExtensionParams);
    }

    /** Parses the path id; a malformed id cannot name a sandbox, so it is a 404 like an unknown one. */
    static SandboxId sandboxId(Exchange ex) {
        String raw = ex.param("id");
        if (!SandboxId.isValid(raw)) {
            throw new AgentEnvException(ErrorKind.NOT_FOUND, "sandbox not found (malformed id)");
        }
        return new SandboxId(raw);
    }

    /** A template id or name, or a built template's {@code name:tag}. */
    private static boolean isTemplateReference(String text) {
        int colon = text == null ? -1 : text.indexOf(':');
        return colon < 0
                ? TemplateId.isValid(text)
                : TemplateId.isValid(text.substring(0, colon)) && TemplateId.isValid(text.substring(colon + 1));
    }

    private Reply create(CreateSandboxRequest req, Duration defaultTimeout) {
        RefusedFields.check(req);
        if (!isTemplateReference(req.templateID())) {
            throw AgentEnvException.invalidArgument("template " + clip(req.templateID()) + " not found");
        }
        Duration timeout = req.timeout() == null ? defaultTimeout : Duration.ofSeconds(req.timeout());
        CreateSandbox create = new CreateSandbox(
                req.templateID(),
                timeout,
                req.autoPauseOrDefault() ? TimeoutAction.PAUSE : TimeoutAction.KILL,
                req.autoPauseMemoryOrDefault() ? PauseMode.WITH_MEMORY : PauseMode.FILESYSTEM_ONLY,
                req.autoResume() != null && req.autoResume().enabledOrDefault(),
                orEmpty(req.envVars()),
                orEmpty(req.metadata()),
                networkPolicy(req.allowInternetAccess(), req.network()),
                json.write(req.customExtensionParams() == null ? Map.of() : req.customExtensionParams()),
                req.secureOrDefault(),
                HostMask.parse(req.network() == null ? null : req.network().maskRequestHost()),
                volumeMounts(req.volumeMounts()));
        SandboxView view = orchestrator.create(create);
        // DEBUG: the launcher's INFO line "sandbox started" has the id, template and timings of every create
        log.atDebug()
                .addKeyValue("sandbox_id", view.id().value())
                .addKeyValue("template", view.template().value())
                .addKeyValue("timeout_s", timeout.toSeconds())
                .log("sandbox created");
        return new Reply.Json(
                201, wire.sandbox(view), Map.of(SANDBOX_ID_HEADER, view.id().value()));
    }

    private Reply get(Exchange ex) {
        return new Reply.Json(200, wire.detail(orchestrator.get(sandboxId(ex))));
    }

    private Reply kill(Exchange ex) {
        SandboxId id = sandboxId(ex);
        orchestrator.kill(id);
        log.atDebug().addKeyValue("sandbox_id", id.value()).log("sandbox killed"); // INFO from the kill operation
        return Reply.NO_CONTENT;
    }

    private Reply pause(Exchange ex) {
        SandboxId id = sandboxId(ex);
        PauseSandbox body = json.read(ex.body(), PauseSandbox.class, true);
        PauseOutcome outcome =
                orchestrator.pause(id, body.memoryOrDefault() ? PauseMode.WITH_MEMORY : PauseMode.FILESYSTEM_ONLY);
        return switch (outcome) {
            case PAUSED, JOINED -> Reply.NO_CONTENT;
            // the SDK reads 409 as "already paused" and returns false
            case ALREADY_PAUSED ->
                throw new AgentEnvException(ErrorKind.CONFLICT, "sandbox " + id.value() + " is already paused");
        };
    }

    private Reply connect(Exchange ex) {
        SandboxId id = sandboxId(ex);
        ConnectSandbox body = json.read(ex.body(), ConnectSandbox.class, true);
        RefusedFields.check(body);
        Duration timeout = body.timeout() == null ? defaults.connect() : Duration.ofSeconds(body.timeout());
        ConnectResult result = orchestrator.connect(id, timeout);
        int status = switch (result.outcome()) {
            case ALREADY_RUNNING -> 200;
            case RESUMED -> 201;
        };
        return new Reply.Json(status, wire.sandbox(result.view()));
    }

    private Reply resume(Exchange ex) {
        SandboxId id = sandboxId(ex);
        ResumedSandbox body = json.read(ex.body(), ResumedSandbox.class, true);
        RefusedFields.check(body);
        Duration timeout = body.timeout() == null ? defaults.resume() : Duration.ofSeconds(body.timeout());
        return new Reply.Json(201, wire.sandbox(orchestrator.resume(id, timeout)));
    }

    private Reply setTimeout(Exchange ex) {
        SandboxId id = sandboxId(ex);
        SandboxTimeoutUpdate body = json.read(ex.body(), SandboxTimeoutUpdate.class, true);
        orchestrator.setTimeout(
                id, body.timeout() == null ? defaults.setTimeout() : Duration.ofSeconds(body.timeout()));
        return Reply.NO_CONTENT;
    }

    private Reply refresh(Exchange ex) {
        SandboxId id = sandboxId(ex);
        SandboxRefresh body = json.read(ex.body(), SandboxRefresh.class, true);
        orchestrator.refresh(id, body.duration() == null ? defaults.refresh() : Duration.ofSeconds(body.duration()));
        return Reply.NO_CONTENT;
    }

    private Reply fork(Exchange ex) {
        SandboxId id = sandboxId(ex);
        SandboxForkRequest body = json.read(ex.body(), SandboxForkRequest.class, true);
        Optional<Duration> timeout = Optional.ofNullable(body.timeout()).map(Duration::ofSeconds);
        List<ForkResult> results = orchestrator.fork(id, body.countOrDefault(), timeout);
        return new Reply.Json(201, results.stream().map(wire::forkResult).toList());
    }

    private Reply updateNetwork(Exchange ex) {
        SandboxId id = sandboxId(ex);
        SandboxNetworkUpdateConfig body = json.read(ex.body(), SandboxNetworkUpdateConfig.class, true);
        RefusedFields.check(body);
        // the update replaces egress rules; whether public traffic needs a token is fixed at create
        NetworkPolicy.PublicTraffic publicTraffic =
                orchestrator.get(id).network().publicTraffic();
        orchestrator.updateNetwork(
                id,
                new NetworkPolicy(
                        internetAccess(body.allowInternetAccess()),
                        orEmpty(body.allowOut()),
                        orEmpty(body.denyOut()),
                        publicTraffic));
        return Reply.NO_CONTENT;
    }

    private Reply customExtensionParams(Exchange ex) {
        return new Reply.RawJson(200, orchestrator.customExtensionParams(sandboxId(ex)));
    }

    private Reply patchCustomExtensionParams(Exchange ex) {
        SandboxId id = sandboxId(ex);
        String patch = json.readObjectText(ex.body());
        return new Reply.RawJson(200, orchestrator.patchCustomExtensionParams(id, patch));
    }

    static NetworkPolicy networkPolicy(Boolean allowInternetAccess, SandboxNetworkConfig network) {
        if (network == null) {
            return new NetworkPolicy(
                    internetAccess(allowInternetAccess), List.of(), List.of(), NetworkPolicy.PublicTraffic.ALLOWED);
        }
        return new NetworkPolicy(
                internetAccess(allowInternetAccess),
                orEmpty(network.allowOut()),
                orEmpty(network.denyOut()),
                network.allowPublicTrafficOrDefault()
                        ? NetworkPolicy.PublicTraffic.ALLOWED
                        : NetworkPolicy.PublicTraffic.TOKEN_REQUIRED);
    }

    private static NetworkPolicy.InternetAccess internetAccess(Boolean allow) {
        if (allow == null) {
            return NetworkPolicy.InternetAccess.DEFAULT;
        }
        return allow ? NetworkPolicy.InternetAccess.ALLOWED : NetworkPolicy.InternetAccess.DENIED;
    }

    /** The request's {@code volumeMounts} for the orchestrator, which checks them and finds their volumes. */
    private static List<VolumeMountRequest> volumeMounts(List<SandboxVolumeMount> mounts) {
        return orEmpty(mounts).stream()
                .map(m -> new VolumeMountRequest(m.name(), m.path(), m.readOnlyOrDefault()))
                .toList();
    }

    private static <K, V> Map<K, V> orEmpty(Map<K, V> map) {
        return map == null ? Map.of() : map;
    }

    private static <T> List<T> orEmpty(List<T> list) {
        return list == null ? List.of() : list;
    }

    static String clip(String s) {
        return s.length() <= 64 ? s : s.substring(0, 64) + "...";
    }
}
