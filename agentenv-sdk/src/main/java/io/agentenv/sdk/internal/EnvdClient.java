package io.agentenv.sdk.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import io.agentenv.sdk.AuthenticationException;
import io.agentenv.sdk.FileNotFoundException;
import io.agentenv.sdk.InvalidArgumentException;
import io.agentenv.sdk.NotEnoughSpaceException;
import io.agentenv.sdk.NotFoundException;
import io.agentenv.sdk.RateLimitException;
import io.agentenv.sdk.SandboxConfig;
import io.agentenv.sdk.SandboxException;
import io.agentenv.sdk.SandboxNotFoundException;
import io.agentenv.sdk.TimeoutException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Locale;
import java.util.Optional;

/**
 * envd, the agent inside a sandbox, over the Connect protocol (HTTP/1.1; binary protobuf: unary calls as
 * {@code application/proto}, server streams as {@code application/connect+proto} envelopes) and its REST routes
 * ({@code /health}, {@code /files}). Every request carries {@code E2b-Sandbox-Id}, {@code E2b-Sandbox-Port: 49983}
 * and, when the sandbox has one, {@code X-Access-Token}; a user travels as Basic auth with an empty password (RPCs)
 * or the {@code username} query parameter (files), as E2B's SDKs send them. Internal; not part of the API.
 */
public final class EnvdClient {
    private static final String USER_AGENT = "agentenv-java-sdk/" + Version.SDK;
    /** Larger than envd's biggest message (a deep directory listing). */
    private static final int MAX_MESSAGE = 64 * 1024 * 1024;

    private static final Duration HEALTH_TIMEOUT = Duration.ofSeconds(5);

    private final SandboxConfig config;
    private final String sandboxId;
    private final URI base;
    private final Optional<String> accessToken;

    /** A client for the envd of {@code sandboxId}, reached at {@code base} with its access token. */
    public EnvdClient(SandboxConfig config, String sandboxId, URI base, Optional<String> accessToken) {
        this.config = config;
        this.sandboxId = sandboxId;
        this.base = base;
        this.accessToken = accessToken;
    }

    /** The configuration (HTTP client, timeouts, executor). */
    public SandboxConfig config() {
        return config;
    }

    /** The sandbox this client reaches. */
    public String sandboxId() {
        return sandboxId;
    }

    /** A unary call, e.g. {@code procedure = "filesystem.Filesystem/Stat"}; failures mapped by {@link #rpcError}. */
    public <T extends Message> T unary(
            String procedure, Message request, Parser<T> parser, Optional<String> user, boolean filesystem) {
        HttpRequest.Builder b = rpc(procedure, user)
                .timeout(config.requestTimeout())
                .header("Content-Type", "application/proto")
                .POST(HttpRequest.BodyPublishers.ofByteArray(request.toByteArray()));
        HttpResponse<byte[]> response = send(b.build(), HttpResponse.BodyHandlers.ofByteArray(), procedure);
        if (response.statusCode() != 200) {
            throw unaryFailure(response.statusCode(), response.body(), filesystem);
        }
        try {
            return parser.parseFrom(response.body());
        } catch (InvalidProtocolBufferException e) {
            throw new SandboxException("envd answered " + procedure + " with a malformed message", e);
        }
    }

    /**
     * Opens a server stream. Waits for the response headers (within the request timeout); the caller reads the
     * messages with {@link ServerStream#next()} and closes it.
     *
     * @param timeout {@code Connect-Timeout-Ms} (envd ends the call, and kills a process it started, when it passes);
     *                zero for none
     */
    public ServerStream stream(
            String procedure, Message request, Optional<String> user, Duration timeout, boolean filesystem) {
        HttpRequest.Builder b = rpc(procedure, user)
                .timeout(config.requestTimeout())
                .header("Content-Type", "application/connect+proto")
                .header("Keepalive-Ping-Interval", "50")
                .POST(HttpRequest.BodyPublishers.ofByteArray(Envelopes.frame(request.toByteArray())));
        if (!timeout.isZero()) {
            b.header("Connect-Timeout-Ms", Long.toString(timeout.toMillis()));
        }
        HttpResponse<InputStream> response = send(b.build(), HttpResponse.BodyHandlers.ofInputStream(), procedure);
        if (response.statusCode() != 200) {
            byte[] body;
            try (InputStream in = response.body()) {
                body = in.readAllBytes();
            } catch (IOException e) {
                body = new byte[0];
            }
            String code = Json.parse(body)
                    .filter(n -> n.path("code").isTextual())
                    .map(n -> n.get("code").asText())
                    .orElse(codeOfStatus(response.statusCode()));
            if (code.equals("unavailable")) {
                throw new SandboxNotFoundException(
                        "Sandbox is probably not running anymore (HTTP " + response.statusCode() + ")",
                        response.statusCode(),
                        null);
            }
            throw rpcError(code, messageOf(body, response.statusCode()), filesystem, response.statusCode());
        }
        return new ServerStream(this, response.body(), procedure, filesystem);
    }

    /** {@code GET /health}: true on 2xx, false on 502 (not running), else a mapped error. */
    public boolean health() {
        HttpRequest request =
                envd(base("/health")).timeout(HEALTH_TIMEOUT).GET().build();
        HttpResponse<byte[]> response = send(request, HttpResponse.BodyHandlers.ofByteArray(), "/health");
        if (response.statusCode() == 502) {
            return false;
        }
        if (response.statusCode() / 100 == 2) {
            return true;
        }
        throw restError(response.statusCode(), response.body(), false);
    }

    /** Whether the sandbox answered "not running" to a health probe (false when it is running or the probe failed). */
    boolean confirmedGone() {
        try {
            return !health();
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** {@code GET /files?path=}: the file's bytes as a stream (the caller closes it). */
    public InputStream download(String path, Optional<String> user) {
        HttpRequest request = envd(filesUri(Optional.of(path), user))
                .timeout(config.requestTimeout())
                .GET()
                .build();
        HttpResponse<InputStream> response = send(request, HttpResponse.BodyHandlers.ofInputStream(), "/files");
        if (response.statusCode() != 200) {
            byte[] body;
            try (InputStream in = response.body()) {
                body = in.readAllBytes();
            } catch (IOException e) {
                body = new byte[0];
            }
            throw restError(response.statusCode(), body, true);
        }
        return response.body();
    }

    /**
     * {@code POST /files}: with a path, the raw bytes ({@code application/octet-stream}); without one, a multipart body
     * that names each file by its full path. Returns envd's array of written entries.
     */
    public JsonNode upload(
            Optional<String> path, Optional<String> user, String contentType, HttpRequest.BodyPublisher body) {
        HttpRequest request = envd(filesUri(path, user))
                .timeout(Duration.ofMinutes(30))
                .header("Content-Type", contentType)
                .POST(body)
                .build();
        HttpResponse<byte[]> response = send(request, HttpResponse.BodyHandlers.ofByteArray(), "/files");
        if (response.statusCode() != 200) {
            throw restError(response.statusCode(), response.body(), true);
        }
        return Json.parse(response.body())
                .filter(JsonNode::isArray)
                .filter(a -> a.size() > 0)
                .orElseThrow(() -> new SandboxException("Expected to receive information about written file"));
    }

    private URI filesUri(Optional<String> path, Optional<String> user) {
        StringBuilder q = new StringBuilder("/files");
        char sep = '?';
        if (user.isPresent()) {
            q.append(sep).append("username=").append(ApiClient.encode(user.get()));
            sep = '&';
        }
        if (path.isPresent()) {
            q.append(sep).append("path=").append(ApiClient.encode(path.get()));
        }
        return base(q.toString());
    }

    private URI base(String pathAndQuery) {
        String b = base.toString();
        if (b.endsWith("/")) {
            b = b.substring(0, b.length() - 1);
        }
        return URI.create(b + pathAndQuery);
    }

    private HttpRequest.Builder rpc(String procedure, Optional<String> user) {
        HttpRequest.Builder b = envd(base("/" + procedure)).header("Connect-Protocol-Version", "1");
        user.ifPresent(u -> b.header("Authorization", basic(u)));
        return b;
    }

    /** {@code Basic base64(user + ":")}, the form envd reads the user from. */
    public static String basic(String user) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":").getBytes(StandardCharsets.UTF_8));
    }

    private HttpRequest.Builder envd(URI uri) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri)
                .header("E2b-Sandbox-Id", sandboxId)
                .header("E2b-Sandbox-Port", Integer.toString(SandboxConfig.ENVD_PORT))
                .header("User-Agent", USER_AGENT);
        accessToken.ifPresent(t -> b.header("X-Access-Token", t));
        return b;
    }

    private <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler, String what) {
        try {
            return config.httpClient().send(request, handler);
        } catch (HttpTimeoutException e) {
            throw new TimeoutException(
                    "sandbox " + sandboxId + " did not answer " + what + " within "
                            + config.requestTimeout().toMillis() + " ms (requestTimeout)",
                    0,
                    e);
        } catch (IOException e) {
            // a connection that broke off: as E2B's SDKs, ask /health whether the sandbox is gone (never for /health)
            if (!what.equals("/health") && confirmedGone()) {
                throw new TimeoutException(
                        what + ": " + ApiClient.describe(e) + ": the sandbox was killed or reached its "
                                + "end of life while the request was in flight",
                        0,
                        e);
            }
            throw new SandboxException(
                    "cannot reach sandbox " + sandboxId + " at " + base + " (" + what + "): " + ApiClient.describe(e),
                    e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxException("interrupted", e);
        }
    }

    private RuntimeException unaryFailure(int status, byte[] body, boolean filesystem) {
        Optional<JsonNode> json = Json.parse(body);
        String code = json.filter(n -> n.path("code").isTextual())
                .map(n -> n.get("code").asText())
                .orElse(codeOfStatus(status));
        return rpcError(code, messageOf(body, status), filesystem, status);
    }

    private static String messageOf(byte[] body, int status) {
        Optional<JsonNode> json = Json.parse(body);
        if (json.isPresent() && json.get().hasNonNull("message")) {
            return json.get().get("message").asText();
        }
        String text = new String(body, StandardCharsets.UTF_8).strip();
        return text.isEmpty() ? "HTTP " + status : text;
    }

    /** Connect's code for an HTTP status without a Connect error body. */
    public static String codeOfStatus(int status) {
        switch (status) {
            case 400:
                return "internal";
            case 401:
                return "unauthenticated";
            case 403:
                return "permission_denied";
            case 404:
                return "unimplemented";
            case 429:
            case 502:
            case 503:
            case 504:
                return "unavailable";
            default:
                return "unknown";
        }
    }

    /** A Connect error as this SDK's exception (E2B's mapping; {@code not_found} of a filesystem call: a file). */
    public static SandboxException rpcError(String code, String message, boolean filesystem, int status) {
        String text = "[" + code + "] " + message;
        switch (code.toLowerCase(Locale.ROOT)) {
            case "invalid_argument":
                return new InvalidArgumentException(text, status, null);
            case "unauthenticated":
                return new AuthenticationException(text, status, null);
            case "not_found":
                return filesystem
                        ? new FileNotFoundException(text, status, null)
                        : new NotFoundException(text, status, null);
            case "resource_exhausted":
                return new RateLimitException(text + ": The requests are being rate limited.", status, null);
            case "unavailable":
                return new TimeoutException(
                        text + ": the sandbox is not running; it was killed or paused, or its "
                                + "timeout passed (extend it with setTimeout)",
                        status,
                        null);
            case "canceled":
                return new TimeoutException(text + ": the request timed out (requestTimeout)", status, null);
            case "deadline_exceeded":
                return new TimeoutException(text + ": the command or watch reached its timeout", status, null);
            default:
                return new SandboxException(text, status, null);
        }
    }

    /** An envd REST error ({@code /files}, {@code /health}): E2B's mapping by status. */
    public static SandboxException restError(int status, byte[] body, boolean file) {
        String message = messageOf(body, status);
        switch (status) {
            case 400:
                return new InvalidArgumentException(message, status, null);
            case 401:
                return new AuthenticationException(message, status, null);
            case 404:
                return file
                        ? new FileNotFoundException(message, status, null)
                        : new NotFoundException(message, status, null);
            case 429:
                return new RateLimitException(message + ": The requests are being rate limited.", status, null);
            case 502:
                return new TimeoutException(
                        message + ": the sandbox is not running; it was killed or paused, or its "
                                + "timeout passed (extend it with setTimeout)",
                        status,
                        null);
            case 507:
                return new NotEnoughSpaceException(message, status, null);
            default:
                return new SandboxException(status + ": " + message, status, null);
        }
    }

    /** Reads envelopes off a streaming response. */
    static final class Envelopes {
        static final int END_STREAM = 0x02;
        static final int COMPRESSED = 0x01;

        private Envelopes() {}

        static byte[] frame(byte[] payload) {
            byte[] out = new byte[5 + payload.length];
            int n = payload.length;
            out[1] = (byte) (n >>> 24);
            out[2] = (byte) (n >>> 16);
            out[3] = (byte) (n >>> 8);
            out[4] = (byte) n;
            System.arraycopy(payload, 0, out, 5, n);
            return out;
        }

        static int maxMessage() {
            return MAX_MESSAGE;
        }
    }
}
