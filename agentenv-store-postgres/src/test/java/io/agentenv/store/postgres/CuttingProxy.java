package io.agentenv.store.postgres;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A TCP relay on 127.0.0.1 in front of a database server that can cut a connection at a chosen point: when armed, the
 * next bytes one side sends are dropped and both sockets of that connection are closed. Cutting at the next reply
 * loses an answer the server already gave (a commit it made); cutting at the next request loses a request the server
 * never saw. It can also refuse new connections, and then a cut closes every open connection too (the server is
 * unreachable from then on).
 */
final class CuttingProxy implements AutoCloseable {
    /** Where the next cut happens. */
    enum Cut {
        NONE,
        NEXT_REQUEST,
        NEXT_REPLY
    }

    private final ServerSocket listener;
    private final int target;
    private final AtomicReference<Cut> armed = new AtomicReference<>(Cut.NONE);
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean refusing;

    CuttingProxy(int targetPort) throws IOException {
        this.target = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("cutting-proxy").start(this::accept);
    }

    int port() {
        return listener.getLocalPort();
    }

    /** The next bytes sent the given way are dropped and their connection closed. */
    void arm(Cut cut) {
        armed.set(cut);
    }

    /** Whether an armed cut has not happened yet. */
    boolean armed() {
        return armed.get() != Cut.NONE;
    }

    /** New connections are closed at once, and a cut closes all open ones (true); or they are relayed (false). */
    void refuse(boolean refuse) {
        this.refusing = refuse;
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                if (refusing) {
                    client.close();
                    continue;
                }
                Socket server = new Socket();
                server.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), target));
                sockets.add(client);
                sockets.add(server);
                Thread.ofVirtual().start(() -> relay(client, server, Cut.NEXT_REQUEST, client, server));
                Thread.ofVirtual().start(() -> relay(server, client, Cut.NEXT_REPLY, client, server));
            } catch (IOException e) {
                // the listener was closed, or one connection failed: the client sees its socket closed
            }
        }
    }

    private void relay(Socket from, Socket to, Cut cutHere, Socket client, Socket server) {
        byte[] buffer = new byte[16 * 1024];
        try (InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buffer)) > 0) {
                if (armed.compareAndSet(cutHere, Cut.NONE)) {
                    close(client);
                    close(server);
                    if (refusing) {
                        sockets.forEach(CuttingProxy::close);
                    }
                    return;
                }
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // the other direction closed the connection
        } finally {
            close(client);
            close(server);
        }
    }

    private static void close(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        sockets.forEach(CuttingProxy::close);
    }
}
