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
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The JDK's HTTP server ({@code jdk.httpserver}) on a TCP port, every exchange on its own virtual thread, and,
 * optionally, a unix socket relayed to that port ({@link UnixSocketRelay}: the JDK server only listens on TCP).
 * HTTP/1.1 keep-alive, chunked request and response bodies, {@code Expect: 100-continue} and TCP_NODELAY come from the
 * JDK server; its limits are set in {@link #SERVER_PROPERTIES}.
 *
 * <p>It can listen before its handler exists ({@link #start} first, {@link #serve} once envd is wired): requests that
 * arrive in between are accepted and read, and wait for the handler. envd's start-up uses this so that the JDK server's
 * own first-connection set-up runs on the second core while envd wires its services, instead of after them.
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
            // the JDK's own server, named: otherwise the first server looks for another provider in every jar of the
            // class path (~5-10 ms of envd's start-up, before it listens)
            "com.sun.net.httpserver.HttpServerProvider", "sun.net.httpserver.DefaultHttpServerProvider",
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
    private final CompletableFuture<HttpHandler> handler = new CompletableFuture<>();
    private final Duration stopTimeout;
    private final int[] inFlight = {0}; // running exchanges, guarded by itself
    private HttpServer server;
    private ExecutorService executor;
    private UnixSocketRelay relay;

    /** A server whose requests wait for {@link #serve} to name their handler. */
    public EnvdServer(InetSocketAddress address, Optional<Path> unixSocket, Duration stopTimeout) {
        this.address = requireNonNull(address, "address is null");
        this.unixSocket = requireNonNull(unixSocket, "unixSocket is null");
        this.stopTimeout = requireNonNull(stopTimeout, "stopTimeout is null");
    }

    /** A server that serves with {@code handler} from the start. */
    public EnvdServer(InetSocketAddress address, Optional<Path> unixSocket, HttpHandler handler, Duration stopTimeout) {
        this(address, unixSocket, stopTimeout);
        serve(handler);
    }

    /** Hands every request, waiting ones included, to {@code handler}; only the first call counts. */
    public void serve(HttpHandler handler) {
        this.handler.complete(requireNonNull(handler, "handler is null"));
    }

    /** Every exchange on its own virtual thread. */
    private static ExecutorService exchangeThreads() {
        return Executors.newThreadPerTaskExecutor(
                Thread.ofVirtual().name("envd-http-", 0).factory());
    }

    /** Listens on the TCP port (and the unix socket); see also {@link #prepareInBackground}. */
    public void start() throws IOException {
        executor = exchangeThreads();
        server = HttpServer.create(address, 128);
        server.setExecutor(executor);
        server.createContext("/", this::serve);
        server.start();
        if (unixSocket.isPresent()) {
            InetAddress target =
                    address.getAddress() == null || address.getAddress().isAnyLocalAddress()
                            ? InetAddress.getLoopbackAddress()
                            : address.getAddress();
            relay = UnixSocketRelay.open(unixSocket.get(), new InetSocketAddress(target, tcpPort()));
        }
    }

    /**
     * Starts, on two background threads, the JDK's one-time set-ups that the first server and its first response need
     * and that do not depend on envd, so that they run on the second core while envd parses its options and wires: on
     * one, the search for a {@link System.LoggerFinder} (the server's creation waits for it: the JDK looks through its
     * own modules and every jar of the class path, ~5-15 ms of CPU the first time) and then the first virtual thread of
     * an executor like the server's (its first start spins method-handle classes at run time, which the AOT cache does
     * not keep: ~4 ms on the dispatcher thread at the first connection otherwise); on the other, the formatter of every
     * response's {@code Date} header (sun.net.httpserver.ExchangeImpl: locale, time-zone names and rules, ~15-20 ms of
     * CPU, which the first response waits for). Whoever comes second just uses what the first did (or waits for its
     * class initialisation).
     */
    public static void prepareInBackground() {
        Thread.ofPlatform().name("envd-http-warmup").daemon().start(() -> {
            System.LoggerFinder.getLoggerFinder();
            try (ExecutorService first = exchangeThreads()) {
                first.execute(() -> {});
            }
        });
        Thread.ofPlatform().name("envd-date-warmup").daemon().start(() -> {
            String _ = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss zzz", Locale.US)
                    .withZone(ZoneId.of("GMT"))
                    .format(Instant.now());
        });
    }

    private void serve(HttpExchange exchange) throws IOException {
        synchronized (inFlight) {
            inFlight[0]++;
        }
        try {
            HttpHandler current = handler.getNow(null);
            if (current == null) {
                try {
                    current = handler.get();
                } catch (InterruptedException e) { // stopped before it was wired: the connection just closes
                    Thread.currentThread().interrupt();
                    exchange.close();
                    return;
                } catch (ExecutionException e) {
                    throw new IllegalStateException("unreachable: the handler future never fails", e);
                }
            }
            current.handle(exchange);
        } finally {
            synchronized (inFlight) {
                inFlight[0]--;
                inFlight.notifyAll();
            }
        }
    }

    /** How many exchanges are being served or wait for the handler (for tests). */
    int exchangesInFlight() {
        synchronized (inFlight) {
            return inFlight[0];
        }
    }

    /** The bound TCP port (useful with port 0). */
    public int tcpPort() {
        return server.getAddress().getPort();
    }

    /** Closes the unix socket, waits up to the stop timeout for running exchanges, then stops and closes every connection. */
    @Override
    public void close() {
        // an exchange still waiting for a handler (or arriving now) gets one that just ends its connection
        handler.complete(HttpExchange::close);
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
