package io.agentenv.envd.client;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.AccessToken;
import io.agentenv.spi.SandboxId;
import java.time.Clock;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.SocketAddressResolver;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.eclipse.jetty.util.thread.VirtualThreadPool;

/**
 * Opens {@link EnvdClient}s on {@link DirectTransport}s, one per runtime generation of a sandbox, each with its own connection pool, sharing
 * the thread pool (virtual threads), scheduler and buffer pool. A backend keeps one for its lifetime; closing it closes
 * every client still open.
 */
public final class EnvdClients implements AutoCloseable {
    private final EnvdClientSettings settings;
    private final Clock clock;
    /**
     * Every open client's selector keeps one task running on this pool for as long as the client is open, so the pool's
     * cap on concurrent tasks is a cap on running sandboxes: Jetty's default (200) stopped creates at the 200th sandbox
     * (bench/capacity). Virtual threads are cheap; the real limits are memory and the backend's own MAX_SANDBOXES.
     */
    static final int MAX_CONCURRENT_TASKS = 1 << 16;

    private final VirtualThreadPool executor = new VirtualThreadPool(MAX_CONCURRENT_TASKS);
    private final ScheduledExecutorScheduler scheduler = new ScheduledExecutorScheduler("envd-client-scheduler", true);
    private final ArrayByteBufferPool buffers = new ArrayByteBufferPool();
    private final Set<EnvdClient> open = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();

    public EnvdClients(EnvdClientSettings settings, Clock clock) {
        this.settings = requireNonNull(settings, "settings is null");
        this.clock = requireNonNull(clock, "clock is null");
        try {
            executor.setName("envd-client");
            executor.start();
            scheduler.start();
        } catch (Exception e) {
            throw new IllegalStateException("cannot start the envd client's shared threads", e);
        }
    }

    /**
     * A new client (a new connection pool) for one runtime generation reached at {@code address}. {@code token} is sent
     * as {@code X-Access-Token} (an envd that was already initialised requires it, even for a new {@code /init}). Close
     * it when that generation stops.
     */
    public EnvdClient open(SandboxId sandbox, EnvdAddress address, Optional<AccessToken> token) {
        requireNonNull(sandbox, "sandbox is null");
        requireNonNull(address, "address is null");
        requireNonNull(token, "token is null");
        if (closed.get()) {
            throw new IllegalStateException("envd clients are closed");
        }
        ClientConnector connector = new ClientConnector();
        connector.setTCPNoDelay(true);
        connector.setConnectTimeout(settings.connectTimeout());
        connector.setIdleTimeout(settings.idleTimeout());
        HttpClient http = new HttpClient(new HttpClientTransportOverHTTP(connector));
        http.setExecutor(executor);
        http.setScheduler(scheduler);
        http.setByteBufferPool(buffers);
        http.setMaxConnectionsPerDestination(settings.maxConnections());
        http.setIdleTimeout(settings.idleTimeout().toMillis());
        http.setFollowRedirects(false);
        // envd's address is resolved on the caller's thread: for the backends' IP literals (or a unix socket) that is
        // parsing, without a hop to the executor and a scheduled time-out per new connection
        http.setSocketAddressResolver(new SocketAddressResolver.Sync());
        http.setUserAgentField(new HttpField(HttpHeader.USER_AGENT, "agentenv-envd-client"));
        try {
            http.start();
            // added by start(): envd's 401 has no WWW-Authenticate challenge, and every answer goes to the caller
            http.getProtocolHandlers().clear();
            // also added by start(): no Accept-Encoding, as gzip on a loopback or unix-socket hop only costs CPU
            // (and hides a download's length)
            http.getContentDecoderFactories().clear();
        } catch (Exception e) {
            throw new IllegalStateException("cannot start an envd client", e);
        }
        EnvdClient client = new EnvdClient(
                new DirectTransport(http, address, settings.maxResponseBytes()),
                sandbox.value(),
                token,
                settings,
                clock,
                open::remove);
        open.add(client);
        return client;
    }

    /**
     * Hands an open client over to {@code sandbox}: the returned client uses the same connections (an established one
     * stays established) and token, and names {@code sandbox} in its errors; {@code client} is closed without closing
     * them. For an envd made ready before anyone knew which sandbox it would serve (a warm pool's member). Throws
     * {@link IllegalStateException} when {@code client} was closed already.
     */
    public EnvdClient handOver(EnvdClient client, SandboxId sandbox) {
        requireNonNull(client, "client is null");
        requireNonNull(sandbox, "sandbox is null");
        EnvdClient moved = client.moveTo(sandbox.value())
                .orElseThrow(() -> new IllegalStateException("the envd client to hand over is closed"));
        open.add(moved);
        open.remove(client);
        return moved;
    }

    /** Clients open right now (closed ones are forgotten). */
    public int openClients() {
        return open.size();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (EnvdClient client : Set.copyOf(open)) {
            client.close();
        }
        try {
            scheduler.stop();
            executor.stop();
        } catch (Exception e) {
            throw new IllegalStateException("cannot stop the envd client's shared threads", e);
        }
    }
}
