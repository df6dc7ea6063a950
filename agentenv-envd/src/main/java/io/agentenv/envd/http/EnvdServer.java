package io.agentenv.envd.http;

import static java.util.Objects.requireNonNull;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The JDK's HTTP server ({@code jdk.httpserver}) on a TCP port, every exchange on its own virtual thread, and,
 * optionally, a unix socket relayed to that port ({@link UnixSocketRelay}: the JDK server only listens on TCP).
 * HTTP/1.1 keep-alive, chunked request and response bodies, {@code Expect: 100-continue} and TCP_NODELAY come from the
 * JDK server; its limits are set in {@link #SERVER_PROPERTIES}.
 */
public final class EnvdServer implements AutoCloseable {
    /**
     * The JDK server reads its configuration from system properties, once, when its first instance is created; these
     * are set unless the command line already did. Idle keep-alive connections live 10 minutes (the host's clients pool
     * them), checked once a minute (the check's timer thread is one of the few things an idle envd runs: every 10 s by
     * default); request headers are bounded (count and bytes); no request or response time limit, because streams run
     * as long as their process.
     */
    static final Map<String, String> SERVER_PROPERTIES = Map.of(
            "sun.net.httpserver.nodelay", "true",
            "sun.net.httpserver.idleInterval", "600",
            "sun.net.httpserver.clockTick", "60000",
            "sun.net.httpserver.maxIdleConnections", "200",
            "sun.net.httpserver.maxReqHeaders", "100",
            "sun.net.httpserver.maxReqHeaderSize", Integer.toString(64 * 1024));

    static {
        SERVER_PROPERTIES.forEach((name, value) -> {
            if (System.getProperty(name) == null) {
                System.setProperty(name, value);
            }
        });
    }

    private final InetSocketAddress address;
    private final Optional<Path> unixSocket;
    private final HttpHandler handler;
    private final Duration stopTimeout;
    private final int[] inFlight = {0}; // running exchanges, guarded by itself
    private HttpServer server;
    private ExecutorService executor;
    private UnixSocketRelay relay;

    public EnvdServer(InetSocketAddress address, Optional<Path> unixSocket, HttpHandler handler, Duration stopTimeout) {
        this.address = requireNonNull(address, "address is null");
        this.unixSocket = requireNonNull(unixSocket, "unixSocket is null");
        this.handler = requireNonNull(handler, "handler is null");
        this.stopTimeout = requireNonNull(stopTimeout, "stopTimeout is null");
    }

    public void start() throws IOException {
        executor = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("envd-http-", 0).factory());
        server = HttpServer.create(address, 128);
        server.setExecutor(executor);
        server.createContext("/", this::serve);
        server.start();
        if (unixSocket.isPresent()) {
            InetAddress target = address.getAddress() == null || address.getAddress().isAnyLocalAddress()
                    ? InetAddress.getLoopbackAddress() : address.getAddress();
            relay = UnixSocketRelay.open(unixSocket.get(), new InetSocketAddress(target, tcpPort()));
        }
    }

    private void serve(HttpExchange exchange) throws IOException {
        synchronized (inFlight) {
            inFlight[0]++;
        }
        try {
            handler.handle(exchange);
        } finally {
            synchronized (inFlight) {
                inFlight[0]--;
                inFlight.notifyAll();
            }
        }
    }

    /** The bound TCP port (useful with port 0). */
    public int tcpPort() {
        return server.getAddress().getPort();
    }

    /** Closes the unix socket, waits up to the stop timeout for running exchanges, then stops and closes every connection. */
    @Override
    public void close() {
        if (relay != null) {
            relay.close();
        }
        if (server != null) {
            awaitExchanges();
            server.stop(0);
        }
        if (executor != null) {
            executor.shutdownNow();
        }
    }

    private void awaitExchanges() {
        long deadline = System.nanoTime() + stopTimeout.toNanos();
        synchronized (inFlight) {
            while (inFlight[0] > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                try {
                    inFlight.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
