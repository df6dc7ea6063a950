package io.agentenv.envd.client;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.AccessToken;
import io.agentenv.spi.EnvdApi;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdInit;
import io.agentenv.spi.EnvdLogPage;
import io.agentenv.spi.EnvdMetrics;
import io.agentenv.spi.GuestProcess;
import io.agentenv.spi.SandboxId;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.io.Transport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link EnvdApi} over HTTP/1.1 to one runtime generation of one sandbox's envd: keep-alive connections with
 * TCP_NODELAY in a pool of its own (so a connection is never reused by another generation, even when the next one
 * gets the same address), a timeout per call, typed errors. Opened by {@link EnvdClients#open}; close it when the
 * generation stops. Safe for concurrent use. The access token is sent as {@code X-Access-Token} and never logged.
 */
public final class HttpEnvdClient implements EnvdApi, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HttpEnvdClient.class);
    private static final String TOKEN_HEADER = "X-Access-Token";
    private static final int MAX_LOG_LIMIT = 1000;

    private final HttpClient http;
    private final SandboxId sandbox;
    private final EnvdAddress address;
    private final Optional<Transport> unix;
    private final EnvdClientSettings settings;
    private final Clock clock;
    private final Consumer<HttpEnvdClient> onClose;
    private final AtomicReference<Optional<AccessToken>> token;
    private final AtomicBoolean closed = new AtomicBoolean();

    HttpEnvdClient(
            HttpClient http,
            SandboxId sandbox,
            EnvdAddress address,
            Optional<AccessToken> token,
            EnvdClientSettings settings,
            Clock clock,
            Consumer<HttpEnvdClient> onClose) {
        this.http = requireNonNull(http, "http is null");
        this.sandbox = requireNonNull(sandbox, "sandbox is null");
        this.address = requireNonNull(address, "address is null");
        this.token = new AtomicReference<>(requireNonNull(token, "token is null"));
        this.settings = requireNonNull(settings, "settings is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.onClose = requireNonNull(onClose, "onClose is null");
        this.unix = switch (address) {
            case EnvdAddress.Unix u -> Optional.of(new Transport.TCPUnix(u.socket()));
            case EnvdAddress.Tcp t -> Optional.empty();
        };
    }

    public EnvdAddress address() {
        return address;
    }

    @Override
    public void health() throws EnvdException {
        expectNoContent(send(HttpMethod.GET, "/health", null, Optional.empty(), settings.callTimeout()), "/health");
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
                expectNoContent(send(HttpMethod.GET, path, null, Optional.empty(), probe), path);
                log.atDebug()
                        .addKeyValue("sandbox_id", sandbox.value())
                        .addKeyValue("probes", probes)
                        .log("envd is " + state);
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
        expectNoContent(
                send(HttpMethod.POST, "/init", EnvdWire.init(init), Optional.empty(), settings.callTimeout()), "/init");
        init.accessToken().ifPresent(t -> token.set(Optional.of(t)));
    }

    @Override
    public EnvdMetrics metrics() throws EnvdException {
        String body =
                expectOk(send(HttpMethod.GET, "/metrics", null, Optional.empty(), settings.callTimeout()), "/metrics");
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
        String body = expectOk(
                send(
                        HttpMethod.GET,
                        "/logs",
                        null,
                        Optional.of("cursor=" + cursor + "&limit=" + limit),
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
        String path = "/process.Process/List";
        String body = expectOk(send(HttpMethod.POST, path, "{}", Optional.empty(), settings.callTimeout()), path);
        try {
            return EnvdWire.processes(body);
        } catch (EnvdWire.Malformed e) {
            throw malformed(path, e);
        }
    }

    /**
     * A client for {@code next} on this client's connections and token (see {@link EnvdClients#handOver}); this one is
     * closed without closing them. Empty when this client was closed already.
     */
    Optional<HttpEnvdClient> moveTo(SandboxId next) {
        requireNonNull(next, "next is null");
        if (!closed.compareAndSet(false, true)) {
            return Optional.empty();
        }
        return Optional.of(new HttpEnvdClient(http, next, address, token.get(), settings, clock, onClose));
    }

    /** Closes this generation's connections; later calls fail with {@link EnvdException.Unreachable}. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            http.stop();
        } catch (Exception e) {
            log.atWarn().addKeyValue("sandbox_id", sandbox.value()).setCause(e).log("closing the envd client failed");
        } finally {
            onClose.accept(this);
        }
    }

    private ContentResponse send(HttpMethod method, String path, String json, Optional<String> query, Duration timeout)
            throws EnvdException {
        if (closed.get()) {
            throw new EnvdException.Unreachable("the envd client of sandbox " + sandbox + " is closed");
        }
        Request request =
                http.newRequest(uri(path, query)).method(method).timeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
        unix.ifPresent(request::transport);
        token.get().ifPresent(t -> request.headers(h -> h.put(TOKEN_HEADER, t.value())));
        if (json != null) {
            request.headers(h -> h.put("Connect-Protocol-Version", "1"));
            request.body(new StringRequestContent("application/json", json, StandardCharsets.UTF_8));
        }
        CompletableFuture<ContentResponse> answer =
                new CompletableResponseListener(request, settings.maxResponseBytes()).send();
        try {
            return answer.get();
        } catch (InterruptedException e) {
            request.abort(e);
            Thread.currentThread().interrupt();
            throw new EnvdException.Unreachable("interrupted during " + method + " " + path, e);
        } catch (ExecutionException e) {
            throw new EnvdException.Unreachable(
                    method + " " + path + " to envd of sandbox " + sandbox + " failed: " + e.getCause(), e.getCause());
        }
    }

    private URI uri(String path, Optional<String> query) {
        String host = switch (address) {
            case EnvdAddress.Unix u -> "localhost";
            case EnvdAddress.Tcp t -> t.host();
        };
        int port = switch (address) {
            case EnvdAddress.Unix u -> 80;
            case EnvdAddress.Tcp t -> t.port();
        };
        try {
            return new URI("http", null, host, port, path, query.orElse(null), null);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("cannot build an envd URI for host " + host, e);
        }
    }

    private EnvdException rejected(ContentResponse response, String path) {
        String message = EnvdWire.errorMessage(response.getContentAsString());
        return new EnvdException.Rejected(
                response.getStatus(),
                "envd of sandbox " + sandbox + " answered " + response.getStatus() + " to " + path
                        + (message.isEmpty() ? "" : ": " + message));
    }

    private void expectNoContent(ContentResponse response, String path) throws EnvdException {
        if (response.getStatus() != 204 && response.getStatus() != 200) {
            throw rejected(response, path);
        }
    }

    private String expectOk(ContentResponse response, String path) throws EnvdException {
        if (response.getStatus() != 200) {
            throw rejected(response, path);
        }
        return response.getContentAsString();
    }

    private EnvdException malformed(String path, EnvdWire.Malformed e) {
        return new EnvdException.Rejected(
                0,
                "envd of sandbox " + sandbox + " answered an unreadable body to " + path + ": " + e.getMessage(),
                e.getCause());
    }
}
