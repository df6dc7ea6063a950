package io.agentenv.envd.http;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.unixdomain.server.UnixDomainServerConnector;
import org.eclipse.jetty.util.thread.VirtualThreadPool;

/**
 * Jetty 12 (core handlers, no servlets) on a TCP port and, optionally, a unix socket. Every request runs on a virtual
 * thread; idle connections live long enough for keepalive-paced streams.
 */
public final class EnvdServer implements AutoCloseable {
    private static final Duration IDLE_TIMEOUT = Duration.ofMinutes(10);

    private final Server server;
    private final ServerConnector tcp;
    private final Optional<Path> unixSocket;

    public EnvdServer(InetSocketAddress address, Optional<Path> unixSocket, Handler handler, Duration stopTimeout) {
        requireNonNull(address, "address is null");
        this.unixSocket = requireNonNull(unixSocket, "unixSocket is null");
        requireNonNull(handler, "handler is null");
        VirtualThreadPool threads = new VirtualThreadPool();
        threads.setName("envd");
        threads.setMaxConcurrentTasks(10_000);
        server = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
        http.setIdleTimeout(IDLE_TIMEOUT.toMillis());

        tcp = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http));
        tcp.setHost(address.getHostString());
        tcp.setPort(address.getPort());
        tcp.setAcceptedTcpNoDelay(true);
        tcp.setIdleTimeout(IDLE_TIMEOUT.toMillis());
        tcp.setReuseAddress(true);
        server.addConnector(tcp);

        unixSocket.ifPresent(path -> {
            UnixDomainServerConnector unix = new UnixDomainServerConnector(server, 1, 1, new HttpConnectionFactory(http));
            unix.setUnixDomainPath(path);
            unix.setIdleTimeout(IDLE_TIMEOUT.toMillis());
            server.addConnector(unix);
        });

        server.setHandler(new GracefulHandler(handler));
        server.setStopTimeout(stopTimeout.toMillis());
        server.setStopAtShutdown(false);
    }

    public void start() throws Exception {
        if (unixSocket.isPresent()) {
            Files.deleteIfExists(unixSocket.get()); // a stale socket from a previous run blocks the bind
            Path parent = unixSocket.get().toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
        }
        server.start();
    }

    /** The bound TCP port (useful with port 0). */
    public int tcpPort() {
        return tcp.getLocalPort();
    }

    public void join() throws InterruptedException {
        server.join();
    }

    @Override
    public void close() throws Exception {
        try {
            server.stop();
        } catch (TimeoutException e) {
            // graceful stop gave up on idle keep-alive or still-open connections; Jetty closed them forcibly
        }
        if (unixSocket.isPresent()) {
            try {
                Files.deleteIfExists(unixSocket.get());
            } catch (IOException e) {
                // best effort: the next start deletes it too
            }
        }
    }
}
