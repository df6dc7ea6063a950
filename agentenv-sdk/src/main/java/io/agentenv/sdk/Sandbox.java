package io.agentenv.sdk;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentenv.sdk.commands.Commands;
import io.agentenv.sdk.commands.Pty;
import io.agentenv.sdk.files.Files;
import io.agentenv.sdk.internal.ApiClient;
import io.agentenv.sdk.internal.EnvdClient;
import io.agentenv.sdk.internal.Json;
import io.agentenv.sdk.internal.Version;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

/**
 * A sandbox: an isolated machine for running an agent's code. Create one with {@link #create()}, reach an existing
 * one with {@link #connect(String)}; run commands with {@link #commands()}, use terminals with {@link #pty()} and files
 * with {@link #files()}.
 *
 * <p>A sandbox is {@link AutoCloseable}: {@link #close()} kills it unless {@link #keepOnClose()} was called, so
 * {@code try (Sandbox sandbox = Sandbox.create()) { ... }} leaves nothing behind. Static methods act on a sandbox by id
 * without an instance. Every call blocks its thread (cheap on virtual threads); the main calls also come as
 * {@code ...Async} variants returning a {@link CompletableFuture}. Thread-safe.
 *
 * <p>Calls without a {@link SandboxConfig} use {@link SandboxConfig#fromEnvironment()}.
 */
public final class Sandbox implements AutoCloseable {
    private static final String DEBUG_SANDBOX_ID = "debug_sandbox_id";
    private static final String DEBUG_ENVD_VERSION = "99.99.99";

    private final SandboxConfig config;
    private final String sandboxId;
    private final Optional<String> sandboxDomain;
    private final String envdVersion;
    private final Optional<String> envdAccessToken;
    private final Optional<String> trafficAccessToken;
    private final EnvdClient envd;
    private final Commands commands;
    private final Pty pty;
    private final Files files;
    private volatile boolean keepOnClose;

    private Sandbox(
            SandboxConfig config,
            String sandboxId,
            Optional<String> sandboxDomain,
            String envdVersion,
            Optional<String> envdAccessToken,
            Optional<String> trafficAccessToken) {
        this.config = config;
        this.sandboxId = sandboxId;
        this.sandboxDomain = sandboxDomain;
        this.envdVersion = envdVersion;
        this.envdAccessToken = envdAccessToken;
        this.trafficAccessToken = trafficAccessToken;
        this.envd = new EnvdClient(config, sandboxId, config.envdUrl(sandboxId, sandboxDomain), envdAccessToken);
        this.commands = new Commands(envd);
        this.pty = new Pty(commands);
        this.files = new Files(envd, Optional.empty());
    }

    private static Sandbox fromJson(SandboxConfig config, JsonNode s) {
        return new Sandbox(
                config,
                Json.text(s, "sandboxID"),
                Optional.ofNullable(Json.text(s, "domain")).filter(d -> !d.isEmpty()),
                Json.text(s, "envdVersion", "0.0.0"),
                Optional.ofNullable(Json.text(s, "envdAccessToken")).filter(t -> !t.isEmpty()),
                Optional.ofNullable(Json.text(s, "trafficAccessToken")).filter(t -> !t.isEmpty()));
    }

    // ---------------------------------------------------------------- create and connect

    /** A sandbox of the {@code base} template with the server's defaults. */
    public static Sandbox create() {
        return create(CreateOptions.defaults(), SandboxConfig.fromEnvironment());
    }

    /** A sandbox of {@code template} (id, alias or snapshot id). */
    public static Sandbox create(String template) {
        return create(CreateOptions.builder().template(template).build(), SandboxConfig.fromEnvironment());
    }

    /** A sandbox of {@code template} (id, alias or snapshot id) with {@code config}. */
    public static Sandbox create(String template, SandboxConfig config) {
        return create(CreateOptions.builder().template(template).build(), config);
    }

    /** A sandbox made as {@code options} say. */
    public static Sandbox create(CreateOptions options) {
        return create(options, SandboxConfig.fromEnvironment());
    }

    /**
     * A sandbox made as {@code options} say ({@code POST /v2/sandboxes}); returns once it runs and envd answers. In
     * debug mode no request is made. {@link InvalidArgumentException} for an unknown template, {@link RateLimitException}
     * when the server has no free sandbox slot.
     */
    public static Sandbox create(CreateOptions options, SandboxConfig config) {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(config, "config");
        if (config.debug()) {
            return new Sandbox(
                    config, DEBUG_SANDBOX_ID, Optional.empty(), DEBUG_ENVD_VERSION, Optional.empty(), Optional.empty());
        }
        ObjectNode body = Json.object().put("templateID", options.template());
        options.timeout().ifPresent(t -> body.put("timeout", seconds(t)));
        if (!options.metadata().isEmpty()) {
            body.set("metadata", Json.stringMap(options.metadata()));
        }
        if (!options.envs().isEmpty()) {
            body.set("envVars", Json.stringMap(options.envs()));
        }
        options.allowInternetAccess().ifPresent(a -> body.put("allow_internet_access", a));
        options.network().ifPresent(n -> {
            ObjectNode network = Json.object();
            if (!n.allowOut().isEmpty()) {
                network.set("allowOut", Json.strings(n.allowOut()));
            }
            if (!n.denyOut().isEmpty()) {
                network.set("denyOut", Json.strings(n.denyOut()));
            }
            n.allowPublicTraffic().ifPresent(p -> network.put("allowPublicTraffic", p));
            body.set("network", network);
        });
        options.lifecycle().ifPresent(l -> {
            body.put("autoPause", l.onTimeout() == OnTimeout.PAUSE);
            if (l.onTimeout() == OnTimeout.PAUSE) {
                l.keepMemory().ifPresent(k -> body.put("autoPauseMemory", k));
            }
            l.autoResume().ifPresent(a -> body.set("autoResume", Json.object().put("enabled", a)));
        });
        ApiClient.Response r = new ApiClient(config).post("/v2/sandboxes", body);
        if (!r.ok()) {
            throw ApiClient.error(r);
        }
        Sandbox sandbox = fromJson(config, r.json());
        if (Version.compare(sandbox.envdVersion, "0.1.0") < 0) {
            kill(sandbox.sandboxId, config);
            throw new TemplateException("the template's envd (" + sandbox.envdVersion + ") is too old for this SDK");
        }
        return sandbox;
    }

    /** {@link #create(CreateOptions, SandboxConfig)} on the configuration's stream executor. */
    public static CompletableFuture<Sandbox> createAsync(CreateOptions options, SandboxConfig config) {
        return CompletableFuture.supplyAsync(() -> create(options, config), config.streamExecutor());
    }

    /** {@link #create(CreateOptions)} asynchronously. */
    public static CompletableFuture<Sandbox> createAsync(CreateOptions options) {
        return createAsync(options, SandboxConfig.fromEnvironment());
    }

    /** Reaches sandbox {@code sandboxId}, resuming it if it is paused. */
    public static Sandbox connect(String sandboxId) {
        return connect(sandboxId, Optional.empty(), SandboxConfig.fromEnvironment());
    }

    /** Reaches sandbox {@code sandboxId}, resuming it if it is paused. */
    public static Sandbox connect(String sandboxId, SandboxConfig config) {
        return connect(sandboxId, Optional.empty(), config);
    }

    /**
     * Reaches sandbox {@code sandboxId} ({@code POST /v2/sandboxes/{id}/connect}), resuming it if it is paused; a
     * {@code timeout} extends its time to live (never shortens it). {@link SandboxNotFoundException} when it does not
     * exist.
     */
    public static Sandbox connect(String sandboxId, Optional<Duration> timeout, SandboxConfig config) {
        Objects.requireNonNull(sandboxId, "sandboxId");
        timeout.ifPresent(CreateOptions::checkTimeout);
        if (config.debug()) {
            return new Sandbox(
                    config, sandboxId, Optional.empty(), DEBUG_ENVD_VERSION, Optional.empty(), Optional.empty());
        }
        ObjectNode body = Json.object();
        timeout.ifPresent(t -> body.put("timeout", seconds(t)));
        ApiClient.Response r =
                new ApiClient(config).post("/v2/sandboxes/" + ApiClient.encode(sandboxId) + "/connect", body);
        if (!r.ok()) {
            if (r.code() == 404) {
                throw new SandboxNotFoundException(
                        "Sandbox " + sandboxId + " not found: " + r.message(), r.status(), null);
            }
            throw ApiClient.error(r);
        }
        return fromJson(config, r.json());
    }

    /** {@link #connect(String, Optional, SandboxConfig)} asynchronously. */
    public static CompletableFuture<Sandbox> connectAsync(
            String sandboxId, Optional<Duration> timeout, SandboxConfig config) {
        return CompletableFuture.supplyAsync(() -> connect(sandboxId, timeout, config), config.streamExecutor());
    }

    /** Resumes this sandbox if it is paused (a no-op for a running one); returns this sandbox. */
    public Sandbox connect() {
        connect(sandboxId, Optional.empty(), config);
        return this;
    }

    /** Resumes this sandbox if paused and extends its time to live to at least {@code timeout}. */
    public Sandbox connect(Duration timeout) {
        connect(sandboxId, Optional.of(timeout), config);
        return this;
    }

    // ---------------------------------------------------------------- list

    /** Running and paused sandboxes matching {@code options}, newest first, a page at a time. */
    public static Paginator<SandboxInfo> list(ListOptions options) {
        return list(options, SandboxConfig.fromEnvironment());
    }

    /** Running and paused sandboxes matching {@code options} ({@code GET /v2/sandboxes}). */
    public static Paginator<SandboxInfo> list(ListOptions options, SandboxConfig config) {
        Objects.requireNonNull(options, "options");
        return new Paginator<>(options.nextToken(), token -> {
            Map<String, String> query = new LinkedHashMap<>();
            if (!options.metadata().isEmpty()) {
                // E2B's encoding: each key and value encoded, joined as a query string, sent as one (encoded) value
                query.put(
                        "metadata",
                        options.metadata().entrySet().stream()
                                .map(e -> ApiClient.encode(ApiClient.encode(e.getKey())) + "="
                                        + ApiClient.encode(ApiClient.encode(e.getValue())))
                                .collect(Collectors.joining("&")));
            }
            if (!options.states().isEmpty()) {
                query.put(
                        "state",
                        options.states().stream()
                                .sorted()
                                .map(SandboxState::wireName)
                                .collect(Collectors.joining(",")));
            }
            options.limit().ifPresent(l -> query.put("limit", Integer.toString(l)));
            token.ifPresent(t -> query.put("nextToken", t));
            ApiClient.Response r = new ApiClient(config).get("/v2/sandboxes", query);
            if (!r.ok()) {
                throw ApiClient.error(r);
            }
            List<SandboxInfo> items = new ArrayList<>();
            r.json().forEach(s -> items.add(info(s)));
            return new Paginator.Page<>(items, r.nextToken());
        });
    }

    // ---------------------------------------------------------------- kill, pause, timeout

    /** Kills sandbox {@code sandboxId}; false when it was not found. */
    public static boolean kill(String sandboxId) {
        return kill(sandboxId, SandboxConfig.fromEnvironment());
    }

    /** Kills sandbox {@code sandboxId} ({@code DELETE /sandboxes/{id}}); false when it was not found. */
    public static boolean kill(String sandboxId, SandboxConfig config) {
        if (config.debug()) {
            return true;
        }
        ApiClient.Response r = new ApiClient(config).delete(path(sandboxId));
        if (r.code() == 404) {
            return false;
        }
        if (!r.ok()) {
            throw ApiClient.error(r);
        }
        return true;
    }

    /** {@link #kill(String, SandboxConfig)} asynchronously. */
    public static CompletableFuture<Boolean> killAsync(String sandboxId, SandboxConfig config) {
        return CompletableFuture.supplyAsync(() -> kill(sandboxId, config), config.streamExecutor());
    }

    /** Kills this sandbox; false when it was already gone. */
    public boolean kill() {
        return kill(sandboxId, config);
    }

    /** Kills this sandbox asynchronously. */
    public CompletableFuture<Boolean> killAsync() {
        return killAsync(sandboxId, config);
    }

    /**
     * Pauses sandbox {@code sandboxId} ({@code POST /sandboxes/{id}/pause}): its memory (unless {@code keepMemory} is
     * false) and filesystem are kept and its resources freed; {@link #connect} resumes it, processes included. False
     * when it was already paused; {@link SandboxNotFoundException} when it does not exist.
     *
     * @param keepMemory whether to keep memory (empty: the server's default, true)
     */
    public static boolean pause(String sandboxId, Optional<Boolean> keepMemory, SandboxConfig config) {
        ObjectNode body = Json.object();
        keepMemory.ifPresent(k -> body.put("memory", k));
        ApiClient.Response r = new ApiClient(config).post(path(sandboxId) + "/pause", body);
        if (r.code() == 404) {
            throw new SandboxNotFoundException("Sandbox " + sandboxId + " not found", r.status(), null);
        }
        if (r.code() == 409) {
            return false;
        }
        if (!r.ok()) {
            throw ApiClient.error(r);
        }
        return true;
    }

    /** Pauses sandbox {@code sandboxId} with its memory. */
    public static boolean pause(String sandboxId) {
        return pause(sandboxId, Optional.empty(), SandboxConfig.fromEnvironment());
    }

    /** Pauses this sandbox with its memory; false when it was already paused. */
    public boolean pause() {
        return pause(sandboxId, Optional.empty(), config);
    }

    /** Pauses this sandbox, keeping its memory or only its filesystem. */
    public boolean pause(boolean keepMemory) {
        return pause(sandboxId, Optional.of(keepMemory), config);
    }

    /** {@link #pause()} asynchronously. */
    public CompletableFuture<Boolean> pauseAsync() {
        return CompletableFuture.supplyAsync(this::pause, config.streamExecutor());
    }

    /**
     * Sets sandbox {@code sandboxId}'s time to live to {@code timeout} from now (it may shorten it)
     * ({@code POST /sandboxes/{id}/timeout}, whole seconds rounded up).
     */
    public static void setTimeout(String sandboxId, Duration timeout, SandboxConfig config) {
        CreateOptions.checkTimeout(timeout);
        ApiClient.Response r = new ApiClient(config)
                .post(path(sandboxId) + "/timeout", Json.object().put("timeout", seconds(timeout)));
        if (r.code() == 404) {
            throw new SandboxNotFoundException("Sandbox " + sandboxId + " not found", r.status(), null);
        }
        if (!r.ok()) {
            throw ApiClient.error(r);
        }
    }

    /** Sets this sandbox's time to live to {@code timeout} from now. */
    public void setTimeout(Duration timeout) {
        setTimeout(sandboxId, timeout, config);
    }

    // ---------------------------------------------------------------- info and metrics

    /** What the control plane knows about sandbox {@code sandboxId} ({@code GET /sandboxes/{id}}). */
    public static SandboxInfo getInfo(String sandboxId, SandboxConfig config) {
        ApiClient.Response r = new ApiClient(config).get(path(sandboxId), Map.of());
        if (r.code() == 404) {
            throw new SandboxNotFoundException("Sandbox " + sandboxId + " not found", r.status(), null);
        }
        if (!r.ok()) {
            throw ApiClient.error(r);
        }
        return info(r.json());
    }

    /** What the control plane knows about sandbox {@code sandboxId}. */
    public static SandboxInfo getInfo(String sandboxId) {
        return getInfo(sandboxId, SandboxConfig.fromEnvironment());
    }

    /** What the control plane knows about this sandbox. */
    public SandboxInfo getInfo() {
        return getInfo(sandboxId, config);
    }

    /**
     * Samples of sandbox {@code sandboxId}'s resource use between {@code start} and {@code end} (empty: the server's
     * range) ({@code GET /sandboxes/{id}/metrics}).
     */
    public static List<SandboxMetrics> getMetrics(
            String sandboxId, Optional<Instant> start, Optional<Instant> end, SandboxConfig config) {
        Map<String, String> query = new LinkedHashMap<>();
        start.ifPresent(s -> query.put("start", Long.toString(s.getEpochSecond())));
        end.ifPresent(e -> query.put("end", Long.toString(e.getEpochSecond())));
        ApiClient.Response r = new ApiClient(config).get(path(sandboxId) + "/metrics", query);
        if (r.code() == 404) {
            throw new SandboxNotFoundException("Sandbox " + sandboxId + " not found", r.status(), null);
        }
        if (!r.ok()) {
            throw ApiClient.error(r);
        }
        List<SandboxMetrics> out = new ArrayList<>();
        for (JsonNode m : r.json()) {
            Instant at = Json.instant(m, "timestamp");
            if (at == null) {
                at = Instant.ofEpochSecond(m.path("timestampUnix").asLong());
            }
            out.add(new SandboxMetrics(
                    at,
                    m.path("cpuCount").asInt(),
                    m.path("cpuUsedPct").asDouble(),
                    m.path("memUsed").asLong(),
                    m.path("memTotal").asLong(),
                    m.path("memCache").asLong(),
                    m.path("diskUsed").asLong(),
                    m.path("diskTotal").asLong()));
        }
        return out;
    }

    /** Samples of this sandbox's resource use (the server's default range). */
    public List<SandboxMetrics> getMetrics() {
        if (config.debug()) {
            return List.of();
        }
        return getMetrics(sandboxId, Optional.empty(), Optional.empty(), config);
    }

    /** Samples of this sandbox's resource use between {@code start} and {@code end}. */
    public List<SandboxMetrics> getMetrics(Instant start, Instant end) {
        return getMetrics(sandboxId, Optional.of(start), Optional.of(end), config);
    }

    /** Whether the sandbox runs and its envd answers ({@code GET /health} through the sandbox proxy). */
    public boolean isRunning() {
        return envd.health();
    }

    // ---------------------------------------------------------------- fork, snapshots, network

    /**
     * Forks running sandbox {@code sandboxId} ({@code POST /sandboxes/{id}/fork}): each child is a copy of its memory
     * and filesystem (processes included) with its own id. One result per child, in order.
     */
    public static List<ForkResult> fork(String sandboxId, ForkOptions options, SandboxConfig config) {
        ObjectNode body = Json.object().put("count", options.count());
        options.timeout().ifPresent(t -> body.put("timeout", seconds(t)));
        ApiClient.Response r = new ApiClient(config).post(path(sandboxId) + "/fork", body);
        if (r.status() == 404) {
            throw new SandboxNotFoundException("Sandbox " + sandboxId + " not found: " + r.message(), r.status(), null);
        }
        if (!r.ok()) {
            throw ApiClient.error(r);
        }
        List<ForkResult> out = new ArrayList<>();
        for (JsonNode child : r.json()) {
            if (child.hasNonNull("sandbox")) {
                out.add(new ForkResult(fromJson(config, child.get("sandbox")), null));
            } else if (child.hasNonNull("error")) {
                out.add(new ForkResult(null, ApiClient.error(child.get("error"))));
            } else {
                out.add(new ForkResult(null, new SandboxException("Failed to start forked sandbox")));
            }
        }
        return out;
    }

    /** Forks this sandbox into {@code options.count()} children. */
    public List<ForkResult> fork(ForkOptions options) {
        return fork(sandboxId, options, config);
    }

    /** Forks this sandbox into one child (thrown as its error if it could not be made). */
    public Sandbox fork() {
        return fork(ForkOptions.of(1)).get(0).orElseThrow();
    }

    /**
     * Takes a snapshot of running sandbox {@code sandboxId} (memory and filesystem; the sandbox runs on)
     * ({@code POST /sandboxes/{id}/snapshots}); a {@code name} becomes its alias.
     */
    public static SnapshotInfo createSnapshot(String sandboxId, Optional<String> name, SandboxConfig config) {
        ObjectNode body = Json.object();
        name.ifPresent(n -> body.put("name", n));
        ApiClient.Response r = new ApiClient(config).post(path(sandboxId) + "/snapshots", body);
        if (r.code() == 404) {
            throw new SandboxNotFoundException("Sandbox " + sandboxId + " not found", r.status(), null);
        }
        if (!r.ok()) {
            throw ApiClient.error(r);
        }
        return new SnapshotInfo(Json.text(r.json(), "snapshotID"), Json.list(r.json(), "names"));
    }

    /** Takes a snapshot of this sandbox. */
    public SnapshotInfo createSnapshot() {
        return createSnapshot(sandboxId, Optional.empty(), config);
    }

    /** Takes a snapshot of this sandbox named {@code name}. */
    public SnapshotInfo createSnapshot(String name) {
        return createSnapshot(sandboxId, Optional.of(name), config);
    }

    /** Snapshots matching {@code options} ({@code GET /snapshots}), a page at a time. */
    public static Paginator<SnapshotInfo> listSnapshots(SnapshotListOptions options, SandboxConfig config) {
        return new Paginator<>(options.nextToken(), token -> {
            Map<String, String> query = new LinkedHashMap<>();
            options.sandboxId().ifPresent(s -> query.put("sandboxID", s));
            options.name().ifPresent(n -> query.put("name", n));
            options.limit().ifPresent(l -> query.put("limit", Integer.toString(l)));
            token.ifPresent(t -> query.put("nextToken", t));
            ApiClient.Response r = new ApiClient(config).get("/snapshots", query);
            if (!r.ok()) {
                throw ApiClient.error(r);
            }
            List<SnapshotInfo> items = new ArrayList<>();
            r.json().forEach(s -> items.add(new SnapshotInfo(Json.text(s, "snapshotID"), Json.list(s, "names"))));
            return new Paginator.Page<>(items, r.nextToken());
        });
    }

    /** The snapshots of this sandbox. */
    public Paginator<SnapshotInfo> listSnapshots() {
        return listSnapshots(SnapshotListOptions.ofSandbox(sandboxId), config);
    }

    /** Deletes snapshot {@code snapshotId} ({@code DELETE /templates/{id}}); false when it was not found. */
    public static boolean deleteSnapshot(String snapshotId, SandboxConfig config) {
        ApiClient.Response r = new ApiClient(config).delete("/templates/" + ApiClient.encode(snapshotId));
        if (r.code() == 404) {
            return false;
        }
        if (!r.ok()) {
            throw ApiClient.error(r);
        }
        return true;
    }

    /** Deletes snapshot {@code snapshotId} with the environment's configuration. */
    public static boolean deleteSnapshot(String snapshotId) {
        return deleteSnapshot(snapshotId, SandboxConfig.fromEnvironment());
    }

    /**
     * Replaces running sandbox {@code sandboxId}'s egress policy ({@code PUT /sandboxes/{id}/network}).
     */
    public static void updateNetwork(String sandboxId, NetworkUpdate update, SandboxConfig config) {
        ObjectNode body = Json.object();
        if (!update.allowOut().isEmpty()) {
            body.set("allowOut", Json.strings(update.allowOut()));
        }
        if (!update.denyOut().isEmpty()) {
            body.set("denyOut", Json.strings(update.denyOut()));
        }
        update.allowInternetAccess().ifPresent(a -> body.put("allow_internet_access", a));
        ApiClient.Response r = new ApiClient(config).put(path(sandboxId) + "/network", body);
        if (r.code() == 404) {
            throw new SandboxNotFoundException("Sandbox " + sandboxId + " not found", r.status(), null);
        }
        if (!r.ok()) {
            throw ApiClient.error(r);
        }
    }

    /** Replaces this sandbox's egress policy. */
    public void updateNetwork(NetworkUpdate update) {
        updateNetwork(sandboxId, update, config);
    }

    // ---------------------------------------------------------------- guest access

    /** Commands in this sandbox. */
    public Commands commands() {
        return commands;
    }

    /** Pseudo-terminals in this sandbox. */
    public Pty pty() {
        return pty;
    }

    /** This sandbox's filesystem. */
    public Files files() {
        return files;
    }

    /**
     * A URL anyone can upload a file to with {@code POST} (multipart or raw bytes), signed with the sandbox's access
     * token (valid for {@code options.signatureExpiration()} when given).
     */
    public String uploadUrl(String path, UrlOptions options) {
        return fileUrl(path, "write", options);
    }

    /** A URL anyone can download file {@code path} from with {@code GET}, signed like {@link #uploadUrl}. */
    public String downloadUrl(String path, UrlOptions options) {
        return fileUrl(Objects.requireNonNull(path, "path"), "read", options);
    }

    private String fileUrl(String path, String operation, UrlOptions options) {
        if (envdAccessToken.isEmpty() && options.signatureExpiration().isPresent()) {
            throw new InvalidArgumentException(
                    "Signature expiration can be used only when the sandbox has an access token.");
        }
        URI direct = config.directUrl(sandboxId, SandboxConfig.ENVD_PORT, sandboxDomain);
        StringBuilder url = new StringBuilder(direct.getScheme())
                .append("://")
                .append(direct.getRawAuthority())
                .append("/files");
        char sep = '?';
        if (options.user().isPresent()) {
            url.append(sep)
                    .append("username=")
                    .append(ApiClient.encode(options.user().get()));
            sep = '&';
        }
        if (path != null && !path.isEmpty()) {
            url.append(sep).append("path=").append(ApiClient.encode(path));
            sep = '&';
        }
        if (envdAccessToken.isPresent()) {
            Optional<Long> expiration =
                    options.signatureExpiration().map(d -> Instant.now().getEpochSecond() + d.toSeconds());
            url.append(sep)
                    .append("signature=")
                    .append(ApiClient.encode(signature(
                            path == null ? "" : path,
                            operation,
                            options.user().orElse(""),
                            envdAccessToken.get(),
                            expiration)));
            expiration.ifPresent(e -> url.append("&signature_expiration=").append(e));
        }
        return url.toString();
    }

    /**
     * envd's file URL signature: {@code v1_} and the unpadded base64 of SHA-256 over
     * {@code path:operation:user:token[:expiration]}.
     */
    static String signature(String path, String operation, String user, String token, Optional<Long> expiration) {
        String raw = path + ":" + operation + ":" + user + ":" + token
                + expiration.map(e -> ":" + e).orElse("");
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(raw.getBytes(StandardCharsets.UTF_8));
            return "v1_" + Base64.getEncoder().withoutPadding().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The host of port {@code port} in this sandbox: {@code <port>-<id>.<domain>} (no scheme). */
    public String getHost(int port) {
        return config.host(sandboxId, port, sandboxDomain.orElse(config.domain()));
    }

    // ---------------------------------------------------------------- identity

    /** The sandbox's id. */
    public String sandboxId() {
        return sandboxId;
    }

    /** The domain the API named for it, if any. */
    public Optional<String> sandboxDomain() {
        return sandboxDomain;
    }

    /** The version of envd inside. */
    public String envdVersion() {
        return envdVersion;
    }

    /** The token envd wants ({@code X-Access-Token}); keep it secret. */
    public Optional<String> envdAccessToken() {
        return envdAccessToken;
    }

    /** The token for its non-public ports, if it has one. */
    public Optional<String> trafficAccessToken() {
        return trafficAccessToken;
    }

    /** The configuration it was made with. */
    public SandboxConfig config() {
        return config;
    }

    /** Makes {@link #close()} leave the sandbox running; returns this sandbox. */
    public Sandbox keepOnClose() {
        keepOnClose = true;
        return this;
    }

    /** Kills the sandbox unless {@link #keepOnClose()} was called (an already gone sandbox is fine). */
    @Override
    public void close() {
        if (!keepOnClose) {
            kill();
        }
    }

    @Override
    public String toString() {
        return "Sandbox[" + sandboxId + "]";
    }

    // ---------------------------------------------------------------- wire mapping

    private static String path(String sandboxId) {
        return "/sandboxes/" + ApiClient.encode(Objects.requireNonNull(sandboxId, "sandboxId"));
    }

    /** Whole seconds, rounded up, as E2B's SDKs send timeouts. */
    static long seconds(Duration d) {
        long s = d.getSeconds();
        return d.getNano() > 0 ? s + 1 : s;
    }

    static SandboxInfo info(JsonNode s) {
        JsonNode network = s.path("network");
        Optional<Lifecycle> lifecycle = Optional.empty();
        JsonNode l = s.get("lifecycle");
        if (l != null && l.isObject()) {
            boolean pause = "pause".equalsIgnoreCase(Json.text(l, "onTimeout", "kill"));
            boolean autoResume = l.path("autoResume").asBoolean(false);
            lifecycle = Optional.of(new Lifecycle(
                    pause ? OnTimeout.PAUSE : OnTimeout.KILL,
                    Optional.empty(),
                    pause ? Optional.of(autoResume) : Optional.empty()));
        }
        return new SandboxInfo(
                Json.text(s, "sandboxID"),
                Json.text(s, "templateID", ""),
                Optional.ofNullable(Json.text(s, "alias")),
                Json.map(s, "metadata"),
                Json.instant(s, "startedAt"),
                Json.instant(s, "endAt"),
                SandboxState.ofWire(Json.text(s, "state", "running")),
                s.path("cpuCount").asInt(),
                s.path("memoryMB").asInt(),
                s.path("diskSizeMB").asInt(),
                Json.text(s, "envdVersion", ""),
                s.hasNonNull("allowInternetAccess")
                        ? Optional.of(s.get("allowInternetAccess").asBoolean())
                        : Optional.empty(),
                network.isObject() ? Json.list(network, "allowOut") : List.of(),
                network.isObject() ? Json.list(network, "denyOut") : List.of(),
                lifecycle);
    }
}
