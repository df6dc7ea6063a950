package io.agentenv.envd.client;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.Message;
import io.agentenv.envd.protocol.connect.ConnectCode;
import io.agentenv.envd.protocol.connect.ConnectHeaders;
import io.agentenv.envd.protocol.connect.EndStream;
import io.agentenv.envd.protocol.connect.Envelope;
import io.agentenv.envd.protocol.connect.RpcException;
import io.agentenv.envd.protocol.connect.WireFormat;
import io.agentenv.envd.protocol.rest.EntryInfo;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.LongFunction;

/**
 * envd (the guest agent) through the server's sandbox proxy, as the E2B SDK reaches it: requests go to the API URL with
 * the routing headers {@code E2b-Sandbox-Id} and {@code E2b-Sandbox-Port: 49983} and the sandbox's envd token in
 * {@code X-Access-Token}. Connect RPCs use the JSON codec (unary, and server streams of envelopes); files use
 * {@code GET|POST /files}, whose JSON answers are agentenv-envd-protocol's {@code rest} records (read with Jackson, as
 * {@link HttpEnvdClient} reads them). The token is never logged or printed.
 *
 * <p>It runs on the JDK's {@link HttpClient} and touches neither Jetty nor a logger, so that a short-lived process (the
 * {@code aenv} CLI) can use it without loading either: {@link HttpEnvdClient} is the backends' client of an envd they
 * reach directly. Failures are {@link EnvdCallException}s (the proxy's or envd's status and message) or, for Connect
 * errors, {@link RpcException}s.
 */
public final class ProxiedEnvdClient {
    public static final int ENVD_PORT = 49983;
    /** Larger than envd's biggest message (32 KiB of output, base64'd, or a deep ListDir). */
    private static final int MAX_MESSAGE = 64 * 1024 * 1024;

    private static final Duration HEADERS_TIMEOUT = Duration.ofSeconds(60);
    private static final WireFormat CODEC = WireFormat.JSON;

    /** Where envd is and the token it wants; {@code toString} leaves the token out. */
    public record Target(String sandboxId, Optional<String> accessToken) {
        public Target {
            requireNonNull(sandboxId, "sandboxId is null");
            requireNonNull(accessToken, "accessToken is null");
        }

        @Override
        public String toString() {
            return "Target[sandboxId=" + sandboxId + ", accessToken="
                    + (accessToken.isPresent() ? "<redacted>" : "none") + "]";
        }
    }

    private final URI base;
    private final Target target;
    private final HttpClient http;

    /** {@code base}: the server's API URL, which the proxy answers on. */
    public ProxiedEnvdClient(URI base, Target target, HttpClient http) {
        this.base = requireNonNull(base, "base is null");
        this.target = requireNonNull(target, "target is null");
        this.http = requireNonNull(http, "http is null");
    }

    public String sandboxId() {
        return target.sandboxId();
    }

    /** A unary Connect call, e.g. {@code procedure = "filesystem.Filesystem/ListDir"}. */
    public <T extends Message> T unary(String procedure, Message request, T responseType, Optional<String> user) {
        HttpRequest.Builder builder = rpc(procedure, user)
                .timeout(HEADERS_TIMEOUT)
                .header("Content-Type", CODEC.unaryContentType())
                .POST(HttpRequest.BodyPublishers.ofByteArray(CODEC.serialize(request)));
        HttpResponse<byte[]> response = send(builder.build(), HttpResponse.BodyHandlers.ofByteArray());
        if (response.statusCode() != 200) {
            throw failure(response.statusCode(), response.body());
        }
        return CODEC.parse(response.body(), responseType);
    }

    /**
     * A server-streaming Connect call: {@code onMessage} gets each message as it arrives; returns after the end of the
     * stream. An error in the end-stream frame is thrown as an {@link RpcException}.
     *
     * @param timeout {@code Connect-Timeout-Ms}, which envd enforces by ending the call (and killing a process)
     */
    public <T extends Message> void serverStream(
            String procedure,
            Message request,
            T responseType,
            Optional<Duration> timeout,
            Optional<String> user,
            Consumer<T> onMessage) {
        HttpRequest.Builder builder = rpc(procedure, user)
                .timeout(HEADERS_TIMEOUT)
                .header("Content-Type", CODEC.streamContentType())
                .header(ConnectHeaders.KEEPALIVE_PING_INTERVAL, "50")
                .POST(HttpRequest.BodyPublishers.ofByteArray(
                        Envelope.message(CODEC.serialize(request)).encode()));
        timeout.ifPresent(t -> builder.header(ConnectHeaders.TIMEOUT_MS, Long.toString(t.toMillis())));
        HttpResponse<InputStream> response = send(builder.build(), HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream body = response.body()) {
            if (response.statusCode() != 200) {
                throw failure(response.statusCode(), body.readAllBytes());
            }
            while (true) {
                Envelope envelope = nextEnvelope(body);
                if (envelope.isCompressed()) {
                    throw new RpcException(ConnectCode.INTERNAL, "compressed frames are not supported");
                }
                if (envelope.isEndStream()) {
                    EndStream end = EndStream.parse(envelope.payload());
                    if (end.error().isPresent()) {
                        throw end.error().get();
                    }
                    return;
                }
                onMessage.accept(CODEC.parse(envelope.payload(), responseType));
            }
        } catch (IOException e) {
            throw brokeOff(describe(e));
        }
    }

    /**
     * The next frame. A stream that stops without its end frame (cleanly or inside a frame) was cut: the proxy does
     * that when the sandbox is killed or paused.
     */
    private Envelope nextEnvelope(InputStream body) throws IOException {
        Optional<Envelope> envelope;
        try {
            envelope = Envelope.read(body, MAX_MESSAGE);
        } catch (RpcException e) {
            if (e.code() == ConnectCode.INVALID_ARGUMENT) {
                throw brokeOff("incomplete frame");
            }
            throw e;
        }
        return envelope.orElseThrow(() -> brokeOff("no end frame"));
    }

    private EnvdCallException brokeOff(String detail) {
        return new EnvdCallException(
                0,
                "the stream from sandbox " + target.sandboxId() + " broke off (" + detail
                        + "); was the sandbox killed or paused?");
    }

    /** {@code GET /files?path=}: copies the file's bytes to {@code out}. */
    public void download(String path, Optional<String> user, OutputStream out) {
        download(path, user, length -> out);
    }

    /**
     * {@code GET /files?path=}: copies the file's bytes to the stream {@code sink} returns when it is given the
     * response's Content-Length (-1 when it has none).
     */
    public void download(String path, Optional<String> user, LongFunction<OutputStream> sink) {
        HttpRequest request =
                envd(filesUri(path, user)).timeout(HEADERS_TIMEOUT).GET().build();
        HttpResponse<InputStream> response = send(request, HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream body = response.body()) {
            if (response.statusCode() != 200) {
                throw failure(response.statusCode(), body.readAllBytes());
            }
            OutputStream out = sink.apply(
                    response.headers().firstValueAsLong("Content-Length").orElse(-1));
            body.transferTo(out);
            out.flush();
        } catch (IOException e) {
            throw new EnvdCallException(0, "download of " + path + " failed: " + describe(e));
        }
    }

    /** {@code POST /files?path=} with the raw bytes (application/octet-stream); returns the path envd wrote. */
    public String upload(String path, Optional<String> user, HttpRequest.BodyPublisher content) {
        HttpRequest request = envd(filesUri(path, user))
                .timeout(Duration.ofMinutes(30))
                .header("Content-Type", "application/octet-stream")
                .POST(content)
                .build();
        HttpResponse<byte[]> response = send(request, HttpResponse.BodyHandlers.ofByteArray());
        if (response.statusCode() != 200) {
            throw failure(response.statusCode(), response.body());
        }
        try {
            EntryInfo[] written = EnvdWire.JSON.readValue(response.body(), EntryInfo[].class);
            if (written != null && written.length > 0) {
                return written[0].path();
            }
        } catch (IOException | RuntimeException e) {
            // fall through: the upload itself succeeded
        }
        throw new EnvdCallException(response.statusCode(), "envd did not say which file it wrote");
    }

    private URI filesUri(String path, Optional<String> user) {
        return base.resolve("/files?path=" + query(path)
                + user.map(u -> "&username=" + query(u)).orElse(""));
    }

    private HttpRequest.Builder rpc(String procedure, Optional<String> user) {
        HttpRequest.Builder builder = envd(base.resolve("/" + procedure)).header(ConnectHeaders.PROTOCOL_VERSION, "1");
        // envd's Connect handlers take the user from Basic auth, with an empty password (as the SDK sends it)
        user.ifPresent(u -> builder.header(
                "Authorization",
                "Basic " + Base64.getEncoder().encodeToString((u + ":").getBytes(StandardCharsets.UTF_8))));
        return builder;
    }

    private HttpRequest.Builder envd(URI uri) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(uri)
                .header("E2b-Sandbox-Id", target.sandboxId())
                .header("E2b-Sandbox-Port", Integer.toString(ENVD_PORT));
        target.accessToken().ifPresent(token -> builder.header("X-Access-Token", token));
        return builder;
    }

    private <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        try {
            return http.send(request, handler);
        } catch (IOException e) {
            throw new EnvdCallException(0, "cannot reach " + base + ": " + describe(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EnvdCallException(0, "interrupted");
        }
    }

    /**
     * An error answer: a Connect error body ({@code "code"} a string) from envd, or a JSON {@code {code:int,message}}
     * from envd's /files or from the proxy (502: the sandbox is not running; 401: the token was refused).
     */
    private RuntimeException failure(int status, byte[] body) {
        String message = new String(body, StandardCharsets.UTF_8).strip();
        try {
            JsonNode node = EnvdWire.JSON.readTree(body);
            if (node != null && node.isObject()) {
                if (node.path("code").isTextual()) {
                    return RpcException.fromUnaryResponse(status, body);
                }
                if (node.hasNonNull("message")) {
                    message = node.get("message").asText();
                }
            }
        } catch (IOException e) {
            // not JSON: keep the raw text
        }
        if (message.length() > 500) {
            message = message.substring(0, 500) + "...";
        }
        return switch (status) {
            case 502 ->
                new EnvdCallException(status, "sandbox " + target.sandboxId() + " is not running (" + message + ")");
            case 401 -> new EnvdCallException(status, "the sandbox refused access (" + message + ")");
            default -> new EnvdCallException(status, message.isEmpty() ? "HTTP " + status : message);
        };
    }

    private static String query(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    public static String describe(Exception e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
