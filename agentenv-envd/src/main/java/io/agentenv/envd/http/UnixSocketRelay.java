package io.agentenv.envd.http;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves envd's HTTP on a unix socket by relaying each accepted connection, byte for byte, to envd's own TCP listener
 * on loopback (the JDK's HTTP server cannot listen on a unix socket). Two virtual threads per connection copy the two
 * directions; the host's end of stream is passed on as a half-close (envd still answers), and the pair is closed as
 * soon as envd's side ends or either side fails, so a host that hangs up leaves no loopback connection behind. Nothing here outlives a connection:
 * after a CRIU restore the listening socket is there again and connections cut by the checkpoint just end.
 */
final class UnixSocketRelay implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(UnixSocketRelay.class);
    private static final int BUFFER = 16 * 1024;
    static final long FIRST_RETRY_MS = 10;
    static final long LAST_RETRY_MS = 1000;

    private final Path path;
    private final InetSocketAddress target;
    private final ServerSocketChannel listener;
    private final Set<SocketChannel> open = ConcurrentHashMap.newKeySet();

    private UnixSocketRelay(Path path, InetSocketAddress target, ServerSocketChannel listener) {
        this.path = path;
        this.target = target;
        this.listener = listener;
    }

    /** Binds {@code path} (replacing a stale socket file from an earlier run) and starts accepting. */
    static UnixSocketRelay open(Path path, InetSocketAddress target) throws IOException {
        requireNonNull(path, "path is null");
        requireNonNull(target, "target is null");
        Files.deleteIfExists(path); // a stale socket from a previous run blocks the bind
        Path parent = path.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            listener.bind(UnixDomainSocketAddress.of(path));
        } catch (IOException e) {
            listener.close();
            throw e;
        }
        UnixSocketRelay relay = new UnixSocketRelay(path, target, listener);
        Thread.ofVirtual().name("envd-unix-accept").start(relay::acceptLoop);
        return relay;
    }

    /** Connections being relayed right now (for tests and diagnostics). */
    int openConnections() {
        return open.size() / 2;
    }

    private void acceptLoop() {
        acceptUntilClosed(
                listener::accept,
                listener::isOpen,
                client -> Thread.ofVirtual().name("envd-unix-relay").start(() -> relay(client)),
                path);
    }

    /** One accept of the listening socket. */
    @FunctionalInterface
    interface Accepting {
        SocketChannel accept() throws IOException;
    }

    /**
     * Accepts until the listener is closed, handing each connection to {@code relay}. A failed accept (for example no
     * file descriptor left) is retried after a pause that doubles from {@value #FIRST_RETRY_MS} ms up to
     * {@value #LAST_RETRY_MS} ms and starts over after a success, so a lasting failure neither spins nor floods the log.
     */
    static void acceptUntilClosed(
            Accepting accepting, BooleanSupplier isOpen, Consumer<SocketChannel> relay, Path path) {
        long retryMs = FIRST_RETRY_MS;
        while (isOpen.getAsBoolean()) {
            SocketChannel client;
            try {
                client = accepting.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                log.atWarn()
                        .addKeyValue("socket", path)
                        .addKeyValue("error", e.toString())
                        .addKeyValue("retry_ms", retryMs)
                        .log("unix socket accept failed");
                try {
                    Thread.sleep(retryMs);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    return;
                }
                retryMs = Math.min(LAST_RETRY_MS, retryMs * 2);
                continue;
            }
            retryMs = FIRST_RETRY_MS;
            relay.accept(client);
        }
    }

    private void relay(SocketChannel client) {
        open.add(client); // before the connect: a close() meanwhile cuts it too
        SocketChannel server;
        try {
            server = SocketChannel.open(target);
            server.setOption(StandardSocketOptions.TCP_NODELAY, true);
        } catch (IOException e) {
            log.atWarn()
                    .addKeyValue("target", target)
                    .addKeyValue("error", e.toString())
                    .log("unix socket relay could not connect");
            closeQuietly(client);
            open.remove(client);
            return;
        }
        open.add(server);
        if (!listener.isOpen()) { // closed while connecting: close() may have passed over the new connection
            closeQuietly(client);
            closeQuietly(server);
            open.remove(client);
            open.remove(server);
            return;
        }
        Thread upstream = Thread.ofVirtual().name("envd-unix-relay-up").start(() -> copy(client, server));
        copy(server, client); // envd's answer: once the server ends the connection there is nothing left to relay
        closeQuietly(client);
        closeQuietly(server);
        try {
            upstream.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        open.remove(client);
        open.remove(server);
    }

    /** Copies until end of stream, then half-closes {@code to}; a failure closes both. */
    private static void copy(SocketChannel from, SocketChannel to) {
        ByteBuffer buffer = ByteBuffer.allocate(BUFFER);
        try {
            while (from.read(buffer) >= 0) {
                buffer.flip();
                while (buffer.hasRemaining()) {
                    to.write(buffer);
                }
                buffer.clear();
            }
            to.shutdownOutput();
        } catch (IOException e) {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // closing a socket the peer already reset
        }
    }

    /** Stops accepting, cuts relayed connections and removes the socket file. */
    @Override
    public void close() {
        try {
            listener.close();
        } catch (IOException e) {
            // already closed
        }
        open.forEach(UnixSocketRelay::closeQuietly);
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            // best effort: the next start deletes it too
        }
    }
}
