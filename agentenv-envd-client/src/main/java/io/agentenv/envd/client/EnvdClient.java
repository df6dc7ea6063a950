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
import io.agentenv.envd.protocol.process.ListRequest;
import io.agentenv.envd.protocol.process.ListResponse;
import io.agentenv.envd.protocol.process.ProcessConfig;
import io.agentenv.envd.protocol.process.ProcessEvent;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.envd.protocol.process.StartResponse;
import io.agentenv.envd.protocol.rest.EntryInfo;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.EnvdApi;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdInit;
import io.agentenv.spi.EnvdLogPage;
import io.agentenv.spi.EnvdMetrics;
import io.agentenv.spi.GuestCommand;
import io.agentenv.spi.GuestProcess;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * The client of one sandbox's envd: its REST routes ({@code /health}, {@code /ready}, {@code /init}, {@code /metrics},
 * {@code /logs}, {@code /files}) and its Connect RPCs (unary and server streams, in the binary protobuf codec), over an
 * {@link EnvdTransport}. A backend opens one per runtime generation with {@link EnvdClients#open} (direct, pooled
 * connections); the CLI one per command with {@link #throughProxy} (through the server's sandbox proxy).
 *
 * <p>Failures are {@link EnvdException}s: {@link EnvdException.Unreachable} when no answer came (or a stream broke
 * off), {@link EnvdException.Rejected} with the status when envd or the proxy refused; a Connect call's error is the
 * {@link RpcException} envd sent. The access token travels in {@code X-Access-Token} and is never logged or part of a
 * message. Safe for concurrent use. It loads no logger and no Jetty class itself (the CLI uses it).
 */
public final class EnvdClient implements EnvdApi, AutoCloseable {
    private static final String TOKEN_HEADER = "X-Access-Token";
    private static final int MAX_LOG_LIMIT = 1000;
    /** Larger than envd's biggest message (32 KiB of output, or a deep ListDir). */
    private static final int MAX_MESSAGE = 64 * 1024 * 1024;

    private static final WireFormat CODEC = WireFormat.PROTO;
    /** Through the proxy (a person waits): a call may take up to a minute, an upload half an hour. */
    private static final EnvdClientSettings PROXIED = new EnvdClientSettings(
            Duration.ofSeconds(5),
            Duration.ofSeconds(60),
            Duration.ofSeconds(1),
            Duration.ofMillis(5),
            Duration.ofSeconds(30),
            1,
            MAX_MESSAGE);

    private static final Duration UPLOAD_TIMEOUT = Duration.ofMinutes(30);

    private final EnvdTransport transport;
    private final String sandbox;
    private final EnvdClientSettings settings;
    private final Clock clock;
    private final Consumer<EnvdClient> onClose;
    private final AtomicReference<Optional<AccessToken>> token;
    private final AtomicBoolean closed = new AtomicBoolean();

    EnvdClient(
            EnvdTransport transport,
            String sandbox,
            Optional<AccessToken> token,
            EnvdClientSettings settings,
            Clock clock,
            Consumer<EnvdClient> onClose) {
        this.transport = requireNonNull(transport, "transport is null");
        this.sandbox = requireNonNull(sandbox, "sandbox is null");
        this.token = new AtomicReference<>(requireNonNull(token, "token is null"));
        this.settings = requireNonNull(settings, "settings is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.onClose = requireNonNull(onClose, "onClose is null");
    }

    /**
     * envd of {@code sandboxId} through the sandbox proxy of the server at {@code base} (its API URL), with the
     * sandbox's envd token. {@code http} is the caller's and stays open.
     */
    public static EnvdClient throughProxy(URI base, String sandboxId, Optional<String> token, HttpClient http) {
        return new EnvdClient(
                new ProxyTransport(base, sandboxId, http),
                sandboxId,
                token.map(AccessToken::new),
                PROXIED,
                Clock.systemUTC(),
                client -> {});
    }

    public String sandboxId() {
        return sandbox;
    }

    // ---- REST ----------------------------------------------------------------------------------------------------

    @Override
    public void health() throws EnvdException {
        expectNoContent(rest("GET", "/health", Optional.empty(), Optional.empty(), settings.callTimeout()), "/health");
    }

    /**
     * Polls {@code GET /health} until envd answers, each probe bounded by the probe timeout and the time left, with
     * the poll interval between failed probes. Throws {@link EnvdException.Unreachable} (with the last failure as the
     * cause) once {@code deadline} has passed.
     */
    public void waitUntilHealthy(Instant deadline) throws EnvdException {
        poll("/health", "healthy", deadline);
    }

    /**
     * Like {@link #waitUntilHealthy} but polls {@code GET /ready}, which envd answers only once its background one-time
     * set-up has finished (its {@code /health} answers before that). Wait for this before checkpointing an envd, so
     * that no restored copy has to redo the set-up.
     */
    public void waitUntilReady(Instant deadline) throws EnvdException {
        poll("/ready", "ready", deadline);
    }

    private void poll(String path, String state, Instant deadline) throws EnvdException {
        requireNonNull(deadline, "deadline is null");
        int probes = 0;
        EnvdException last = null;
        while (true) {
            Duration left = Duration.between(clock.instant(), deadline);
            if (left.isNegative() || left.isZero()) {
                throw new EnvdException.Unreachable(
                        "envd of sandbox " + sandbox + " was not " + state + " after " + probes + " probes", last);
            }
            probes++;
            try {
                Duration probe = left.compareTo(settings.probeTimeout()) < 0 ? left : settings.probeTimeout();
                expectNoContent(rest("GET", path, Optional.empty(), Optional.empty(), probe), path);
                return;
            } catch (EnvdException e) {
                last = e;
            }
            Duration pause = Duration.between(clock.instant(), deadline);
            pause = pause.compareTo(settings.pollInterval()) < 0 ? pause : settings.pollInterval();
            if (!pause.isNegative() && !pause.isZero()) {
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new EnvdException.Unreachable("interrupted while waiting for envd of sandbox " + sandbox, e);
                }
            }
        }
    }

    @Override
    public void init(EnvdInit init) throws EnvdException {
        requireNonNull(init, "init is null");
        EnvdTransport.Body body = new EnvdTransport.Body.Bytes(
                "application/json", EnvdWire.init(init).getBytes(StandardCharsets.UTF_8));
        expectNoContent(rest("POST", "/init", Optional.empty(), Optional.of(body), settings.callTimeout()), "/init");
        init.accessToken().ifPresent(t -> token.set(Optional.of(t)));
    }

    @Override
    public EnvdMetrics metrics() throws EnvdException {
        byte[] body = expectOk(
                rest("GET", "/metrics", Optional.empty(), Optional.empty(), settings.callTimeout()), "/metrics");
        try {
            return EnvdWire.metrics(body);
        } catch (EnvdWire.Malformed e) {
            throw malformed("/metrics", e);
        }
    }

    @Override
    public EnvdLogPage logs(long cursor, int limit) throws EnvdException {
        if (cursor < 0) {
            throw new IllegalArgumentException("cursor must be >= 0, got " + cursor);
        }
        if (limit < 1 || limit > MAX_LOG_LIMIT) {
            throw new IllegalArgumentException("limit must be 1.." + MAX_LOG_LIMIT + ", got " + limit);
        }
        byte[] body = expectOk(
                rest(
                        "GET",
                        "/logs",
                        Optional.of("cursor=" + cursor + "&limit=" + limit),
                        Optional.empty(),
                        settings.callTimeout()),
                "/logs");
        try {
            return EnvdWire.logs(body);
        } catch (EnvdWire.Malformed e) {
            throw malformed("/logs", e);
        }
    }

    @Override
    public List<GuestProcess> processes() throws EnvdException {
        try {
            ListResponse list = unary(
                    "process.Process/List",
                    ListRequest.getDefaultInstance(),
                    ListResponse.getDefaultInstance(),
                    Optional.empty());
            return EnvdWire.processes(list);
        } catch (RpcException e) {
            throw new EnvdException.Rejected(
                    e.code().httpStatus(),
                    "envd of sandbox " + sandbox + " refused process.Process/List: ["
                            + e.code().wireName() + "] " + e.getMessage(),
                    e);
        }
    }

    @Override
    public GuestCommand.Exit run(GuestCommand command, GuestCommand.Output output) throws EnvdException {
        ProcessConfig.Builder process = ProcessConfig.newBuilder()
                .setCmd(command.cmd())
                .addAllArgs(command.args())
                .putAllEnvs(command.env());
        command.cwd().ifPresent(process::setCwd);
        // no stdin, as the SDKs send it unless asked: the process starts without a pipe to keep open
        StartRequest start =
                StartRequest.newBuilder().setProcess(process).setStdin(false).build();
        AtomicReference<ProcessEvent.EndEvent> end = new AtomicReference<>();
        try {
            serverStream(
                    "process.Process/Start",
                    start,
                    StartResponse.getDefaultInstance(),
                    command.timeout(),
                    command.user(),
                    response -> {
                        ProcessEvent event = response.getEvent();
                        switch (event.getEventCase()) {
                            case DATA -> {
                                ProcessEvent.DataEvent data = event.getData();
                                switch (data.getOutputCase()) {
                                    case STDOUT ->
                                        output.stdout(data.getStdout().toByteArray());
                                    case STDERR ->
                                        output.stderr(data.getStderr().toByteArray());
                                    case PTY -> output.stdout(data.getPty().toByteArray());
                                    case OUTPUT_NOT_SET -> {}
                                }
                            }
                            case END -> end.set(event.getEnd());
                            case START, KEEPALIVE, EVENT_NOT_SET -> {}
                        }
                    });
        } catch (RpcException e) {
            throw new EnvdException.Rejected(
                    e.code().httpStatus(),
                    "envd of sandbox " + sandbox + " did not run " + command.cmd() + ": ["
                            + e.code().wireName() + "] " + e.getMessage(),
                    e);
        }
        ProcessEvent.EndEvent result = end.get();
        if (result == null) {
            throw new EnvdException.Unreachable(
                    "the stream from sandbox " + sandbox + " ended without the command's exit status");
        }
        return new GuestCommand.Exit(
                result.getExited() ? result.getExitCode() : -1, result.getExited(), result.getStatus());
    }

    // ---- files ---------------------------------------------------------------------------------------------------

    /** {@code GET /files?path=}: copies the file's bytes to {@code out}. */
    public void download(String path, Optional<String> user, OutputStream out) throws EnvdException {
        download(path, user, length -> out);
    }

    /**
     * {@code GET /files?path=}: copies the file's bytes to the stream {@code sink} returns when it is given the
     * answer's Content-Length (-1 when it has none).
     */
    public void download(String path, Optional<String> user, LongFunction<OutputStream> sink) throws EnvdException {
        try (EnvdTransport.Answer answer = send(new EnvdTransport.Request(
                "GET",
                "/files",
                Optional.of(filesQuery(path, user)),
                headers(Map.of()),
                Optional.empty(),
                settings.callTimeout(),
                true))) {
            if (answer.status() != 200) {
                throw rejected(answer.status(), readAll(answer), "/files");
            }
            OutputStream out = sink.apply(
                    answer.header("Content-Length").map(Long::parseLong).orElse(-1L));
            answer.body().transferTo(out);
            out.flush();
        } catch (IOException e) {
            throw new EnvdException.Unreachable("download of " + path + " failed: " + describe(e), e);
        }
    }

    /**
     * {@code POST /files?path=} with the raw bytes (application/octet-stream) of {@code content}, {@code length} bytes
     * long (-1: unknown, sent chunked); returns the path envd wrote.
     */
    @Override
    public String upload(String path, Optional<String> user, long length, Supplier<InputStream> content)
            throws EnvdException {
        EnvdTransport.Body body = new EnvdTransport.Body.Stream("application/octet-stream", length, content);
        byte[] answer = expectOk(
                rest("POST", "/files", Optional.of(filesQuery(path, user)), Optional.of(body), UPLOAD_TIMEOUT),
                "/files");
        try {
            EntryInfo[] written = EnvdWire.JSON.readValue(answer, EntryInfo[].class);
            if (written != null && written.length > 0) {
                return written[0].path();
            }
        } catch (IOException | RuntimeException e) {
            // below: the upload itself succeeded
        }
        throw new EnvdException.Rejected(200, "envd did not say which file it wrote");
    }

    // ---- Connect -------------------------------------------------------------------------------------------------

    /**
     * A unary Connect call, e.g. {@code procedure = "filesystem.Filesystem/ListDir"}, as {@code user} (envd's default
     * user when empty).
     */
    public <T extends Message> T unary(String procedure, Message request, T responseType, Optional<String> user)
            throws EnvdException {
        EnvdTransport.Body body = new EnvdTransport.Body.Bytes(CODEC.unaryContentType(), CODEC.serialize(request));
        byte[] answer = expectOk(
                send(connect(procedure, user, Map.of(), body, settings.callTimeout(), false)), "/" + procedure);
        return CODEC.parse(answer, responseType);
    }

    /**
     * A server-streaming Connect call: {@code onMessage} gets each message as it arrives; returns after the end of the
     * stream. An error in the end-stream frame is thrown as an {@link RpcException}; a stream that stops without its
     * end frame (the proxy cuts it when the sandbox is killed or paused) as {@link EnvdException.Unreachable}.
     *
     * @param timeout {@code Connect-Timeout-Ms}, which envd enforces by ending the call (and killing a process)
     */
    public <T extends Message> void serverStream(
            String procedure,
            Message request,
            T responseType,
            Optional<Duration> timeout,
            Optional<String> user,
            Consumer<T> onMessage)
            throws EnvdException {
        Map<String, String> extra = new LinkedHashMap<>();
        // envd pings a quiet stream at this interval, well inside the connection's idle timeout, so that a command
        // that prints nothing for a while (a ready check, a long download) keeps its stream
        extra.put(
                ConnectHeaders.KEEPALIVE_PING_INTERVAL,
                Long.toString(Math.max(1, settings.idleTimeout().toSeconds() / 3)));
        timeout.ifPresent(t -> extra.put(ConnectHeaders.TIMEOUT_MS, Long.toString(t.toMillis())));
        EnvdTransport.Body body = new EnvdTransport.Body.Bytes(
                CODEC.streamContentType(),
                Envelope.message(CODEC.serialize(request)).encode());
        try (EnvdTransport.Answer answer = send(connect(procedure, user, extra, body, settings.callTimeout(), true))) {
            if (answer.status() != 200) {
                throw rejected(answer.status(), readAll(answer), "/" + procedure);
            }
            InputStream in = answer.body();
            while (true) {
                Envelope envelope = nextEnvelope(in);
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
            throw brokeOff(describe(e), e);
        }
    }

    /** The next frame; a stream that stops without its end frame (cleanly or inside a frame) was cut. */
    private Envelope nextEnvelope(InputStream body) throws IOException, EnvdException {
        Optional<Envelope> envelope;
        try {
            envelope = Envelope.read(body, MAX_MESSAGE);
        } catch (RpcException e) {
            if (e.code() == ConnectCode.INVALID_ARGUMENT) {
                throw brokeOff("incomplete frame", e);
            }
            throw e;
        }
        if (envelope.isEmpty()) {
            throw brokeOff("no end frame", null);
        }
        return envelope.get();
    }

    private EnvdException brokeOff(String detail, Throwable cause) {
        return new EnvdException.Unreachable(
                "the stream from sandbox " + sandbox + " broke off (" + detail + "); was the sandbox killed or paused?",
                cause);
    }

    private EnvdTransport.Request connect(
            String procedure,
            Optional<String> user,
            Map<String, String> extra,
            EnvdTransport.Body body,
            Duration timeout,
            boolean streamed) {
        Map<String, String> headers = new LinkedHashMap<>(extra);
        headers.put(ConnectHeaders.PROTOCOL_VERSION, "1");
        // envd's Connect handlers take the user from Basic auth, with an empty password (as the SDK sends it)
        user.ifPresent(u -> headers.put(
                "Authorization",
                "Basic " + Base64.getEncoder().encodeToString((u + ":").getBytes(StandardCharsets.UTF_8))));
        return new EnvdTransport.Request(
                "POST", "/" + procedure, Optional.empty(), headers(headers), Optional.of(body), timeout, streamed);
    }

    // ---- lifecycle -----------------------------------------------------------------------------------------------

    /**
     * A client for {@code next} on this client's transport and token (see {@link EnvdClients#handOver}); this one is
     * closed without closing the transport. Empty when this client was closed already.
     */
    Optional<EnvdClient> moveTo(String next) {
        requireNonNull(next, "next is null");
        if (!closed.compareAndSet(false, true)) {
            return Optional.empty();
        }
        return Optional.of(new EnvdClient(transport, next, token.get(), settings, clock, onClose));
    }

    /** Closes the transport (a direct one's connections); later calls fail with {@link EnvdException.Unreachable}. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            transport.close();
        } finally {
            onClose.accept(this);
        }
    }

    // ---- plumbing ------------------------------------------------------------------------------------------------

    private EnvdTransport.Answer rest(
            String method, String path, Optional<String> query, Optional<EnvdTransport.Body> body, Duration timeout)
            throws EnvdException {
        return send(new EnvdTransport.Request(method, path, query, headers(Map.of()), body, timeout, false));
    }

    private Map<String, String> headers(Map<String, String> headers) {
        Optional<AccessToken> current = token.get();
        if (current.isEmpty()) {
            return headers;
        }
        Map<String, String> with = new LinkedHashMap<>(headers);
        with.put(TOKEN_HEADER, current.get().value());
        return with;
    }

    private EnvdTransport.Answer send(EnvdTransport.Request request) throws EnvdException {
        if (closed.get()) {
            throw new EnvdException.Unreachable("the envd client of sandbox " + sandbox + " is closed");
        }
        try {
            return transport.send(request);
        } catch (IOException e) {
            throw new EnvdException.Unreachable(
                    request.method() + " " + request.path() + " to envd of sandbox " + sandbox + " failed: "
                            + describe(e),
                    e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EnvdException.Unreachable("interrupted during " + request.method() + " " + request.path(), e);
        }
    }

    private void expectNoContent(EnvdTransport.Answer answer, String path) throws EnvdException {
        try (answer) {
            if (answer.status() != 204 && answer.status() != 200) {
                throw rejected(answer.status(), readAll(answer), path);
            }
        }
    }

    private byte[] expectOk(EnvdTransport.Answer answer, String path) throws EnvdException {
        try (answer) {
            byte[] body = readAll(answer);
            if (answer.status() != 200) {
                throw rejected(answer.status(), body, path);
            }
            return body;
        }
    }

    private byte[] readAll(EnvdTransport.Answer answer) throws EnvdException {
        try {
            byte[] body = answer.body().readNBytes(settings.maxResponseBytes() + 1);
            if (body.length > settings.maxResponseBytes()) {
                throw new EnvdException.Rejected(
                        answer.status(),
                        "envd of sandbox " + sandbox + " answered more than " + settings.maxResponseBytes() + " bytes");
            }
            return body;
        } catch (IOException e) {
            throw new EnvdException.Unreachable(
                    "the answer of envd of sandbox " + sandbox + " broke off: " + describe(e), e);
        }
    }

    /**
     * An error answer: a Connect error body ({@code "code"} a string) is thrown as the {@link RpcException} it
     * describes; otherwise a JSON {@code {code:int,message}} from envd or from the proxy (502: the sandbox is not
     * running; 401: the token was refused), or text.
     */
    private EnvdException rejected(int status, byte[] body, String path) {
        String message = new String(body, StandardCharsets.UTF_8).strip();
        try {
            JsonNode node = EnvdWire.JSON.readTree(body);
            if (node != null && node.isObject()) {
                if (node.path("code").isTextual()) {
                    throw RpcException.fromUnaryResponse(status, body);
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
            case 502 -> new EnvdException.Rejected(status, "sandbox " + sandbox + " is not running (" + message + ")");
            case 401 -> new EnvdException.Rejected(status, "the sandbox refused access (" + message + ")");
            default ->
                new EnvdException.Rejected(
                        status,
                        "envd of sandbox " + sandbox + " answered " + status + " to " + path
                                + (message.isEmpty() ? "" : ": " + message));
        };
    }

    private EnvdException malformed(String path, EnvdWire.Malformed e) {
        return new EnvdException.Rejected(
                0,
                "envd of sandbox " + sandbox + " answered an unreadable body to " + path + ": " + e.getMessage(),
                e.getCause());
    }

    private static String filesQuery(String path, Optional<String> user) {
        return "path=" + query(path) + user.map(u -> "&username=" + query(u)).orElse("");
    }

    private static String query(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** An exception's message, or its class's name when it has none. */
    public static String describe(Exception e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
