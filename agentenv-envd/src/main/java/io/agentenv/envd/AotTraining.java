package io.agentenv.envd;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The workload recorded into the JDK AOT cache (JEP 483/514): the requests a sandbox sees first, over raw HTTP/1.1 so
 * no client library ends up in the cache.
 */
final class AotTraining {
    private AotTraining() {}

    static void exercise(int port, Optional<Path> unixSocket) throws IOException {
        request(port, "GET", "/health", null, null);
        request(port, "GET", "/ready", null, null);
        request(port, "POST", "/init", "application/json", "{\"envVars\":{\"A\":\"1\"}}".getBytes(StandardCharsets.UTF_8));
        request(port, "GET", "/envs", null, null);
        request(port, "POST", "/process.Process/List", "application/json", "{}".getBytes(StandardCharsets.UTF_8));
        byte[] start = "{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"echo aot\"]},\"stdin\":false}"
                .getBytes(StandardCharsets.UTF_8);
        request(port, "POST", "/process.Process/Start", "application/connect+json", envelope(start));
        byte[] withStdin = "{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"echo aot\"]},\"stdin\":true}"
                .getBytes(StandardCharsets.UTF_8);
        request(port, "POST", "/process.Process/Start", "application/connect+json", envelope(withStdin));
        request(port, "POST", "/process.Process/SendSignal", "application/json",
                "{\"process\":{\"pid\":1},\"signal\":\"SIGNAL_SIGKILL\"}".getBytes(StandardCharsets.UTF_8));
        request(port, "GET", "/logs?limit=10", null, null);
        // the host samples every sandbox's metrics every few seconds: with its classes and profile in the cache, an idle
        // envd does not spend its first hours loading and compiling this path one sample at a time
        request(port, "GET", "/metrics", null, null);
        request(port, "GET", "/metrics", null, null);
        request(port, "GET", "/nope", null, null);
        request(port, "GET", "/ready", null, null);
        if (unixSocket.isPresent()) { // the host's way in: the relay's classes come from the cache too
            try (SocketChannel channel = SocketChannel.open(UnixDomainSocketAddress.of(unixSocket.get()))) {
                channel.write(ByteBuffer.wrap("GET /health HTTP/1.1\r\nHost: envd\r\nConnection: close\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII)));
                Channels.newInputStream(channel).readAllBytes();
            }
        }
    }

    private static byte[] envelope(byte[] payload) {
        return ByteBuffer.allocate(5 + payload.length).put((byte) 0).putInt(payload.length).put(payload).array();
    }

    private static void request(int port, String method, String path, String contentType, byte[] body) throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setTcpNoDelay(true);
            StringBuilder head = new StringBuilder()
                    .append(method).append(' ').append(path).append(" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
            if (body != null) {
                head.append("Content-Type: ").append(contentType).append("\r\nContent-Length: ").append(body.length)
                        .append("\r\nConnect-Protocol-Version: 1\r\n");
            }
            head.append("\r\n");
            OutputStream out = socket.getOutputStream();
            out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
            if (body != null) {
                out.write(body);
            }
            out.flush();
            InputStream in = socket.getInputStream();
            in.readAllBytes();
        }
    }
}
