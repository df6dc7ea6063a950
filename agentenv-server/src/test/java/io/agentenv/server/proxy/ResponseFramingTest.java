package io.agentenv.server.proxy;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How the proxy frames what it forwards, seen byte for byte by a raw client: bytes the sandbox sent together leave
 * together (envd's whole answer to a short command is one read for the SDK, not one per envelope).
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ResponseFramingTest {
    @TempDir
    Path dir;

    private ProxyHarness h;

    @BeforeEach
    void start() throws Exception {
        h = new ProxyHarness(dir);
    }

    @AfterEach
    void stop() throws Exception {
        h.close();
    }

    @Test
    void chunks_the_sandbox_sent_in_one_write_reach_the_client_in_one_write_with_the_end() throws Exception {
        String id = h.createId();
        // envd's answer to commands.run('true'), shortened: three HTTP chunks and the end, all in one write
        String answer =
                "HTTP/1.1 200 OK\r\nContent-Type: application/connect+json\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "5\r\nstart\r\n3\r\nend\r\n3\r\neos\r\n0\r\n\r\n";
        try (OneShotUpstream upstream = new OneShotUpstream(answer)) {
            String response = rawExchange(id, upstream.port());

            // the whole body in one write: Jetty then sends it with its length rather than chunked
            assertThat(response)
                    .startsWith("HTTP/1.1 200 ")
                    .containsIgnoringCase("content-length: 11\r\n")
                    .doesNotContainIgnoringCase("transfer-encoding")
                    .endsWith("\r\n\r\nstartendeos");
        }
    }

    @Test
    void a_chunk_arriving_alone_is_forwarded_at_once_and_what_follows_with_the_end() throws Exception {
        String id = h.createId();
        String head = "HTTP/1.1 200 OK\r\nContent-Type: application/connect+json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5\r\nstart\r\n";
        try (OneShotUpstream upstream = new OneShotUpstream(head, "3\r\nend\r\n3\r\neos\r\n0\r\n\r\n")) {
            String response = rawExchange(id, upstream.port(), "start", upstream.second);

            assertThat(chunks(response))
                    .as("the body's chunks as the client received them")
                    .containsExactly("start", "endeos", "");
        }
    }

    @Test
    void a_body_with_a_length_is_forwarded_whole_with_its_length() throws Exception {
        String id = h.createId();
        String answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}";
        try (OneShotUpstream upstream = new OneShotUpstream(answer)) {
            String response = rawExchange(id, upstream.port());

            assertThat(response)
                    .startsWith("HTTP/1.1 200 ")
                    .containsIgnoringCase("content-length: 11\r\n")
                    .endsWith("\r\n\r\n{\"ok\":true}");
        }
    }

    /** One HTTP/1.1 request (keep-alive) routed to {@code port} of sandbox {@code id}; its whole response. */
    private String rawExchange(String id, int port) throws IOException {
        return rawExchange(id, port, "", new CountDownLatch(0));
    }

    /**
     * As above; once the response so far ends with {@code marker}, {@code seen} is counted down. The response ends
     * after its Content-Length or its last chunk.
     */
    private String rawExchange(String id, int port, String marker, CountDownLatch seen) throws IOException {
        try (Socket client = new Socket(InetAddress.getLoopbackAddress(), h.api.port())) {
            client.setSoTimeout(30_000);
            client.getOutputStream()
                    .write(("POST /process.Process/Start HTTP/1.1\r\nHost: 127.0.0.1\r\n" + "E2b-Sandbox-Id: " + id
                                    + "\r\nE2b-Sandbox-Port: " + port + "\r\nContent-Length: 2\r\n\r\n{}")
                            .getBytes(US_ASCII));
            InputStream in = client.getInputStream();
            ByteArrayOutputStream received = new ByteArrayOutputStream();
            int bodyAt = -1;
            int length = -1;
            for (int b; (b = in.read()) >= 0; ) {
                received.write(b);
                String text = received.toString(US_ASCII);
                if (seen.getCount() > 0 && text.endsWith(marker)) {
                    seen.countDown();
                }
                if (bodyAt < 0 && text.endsWith("\r\n\r\n")) {
                    bodyAt = text.length();
                    String headers = text.toLowerCase(Locale.ROOT);
                    int at = headers.indexOf("content-length:");
                    length = at < 0
                            ? -1
                            : Integer.parseInt(headers.substring(at + 15, headers.indexOf("\r\n", at))
                                    .trim());
                }
                boolean whole = bodyAt >= 0
                        && (length >= 0 ? text.length() - bodyAt == length : text.endsWith("\r\n0\r\n\r\n"));
                if (whole) {
                    return text;
                }
            }
            throw new IOException("the connection closed before the response's end: " + received.toString(US_ASCII));
        }
    }

    /** The chunks of a chunked response's body, in order (the last one empty). */
    private static List<String> chunks(String response) {
        String body = response.substring(response.indexOf("\r\n\r\n") + 4);
        List<String> chunks = new ArrayList<>();
        int at = 0;
        while (true) {
            int line = body.indexOf("\r\n", at);
            int size = Integer.parseInt(body.substring(at, line), 16);
            chunks.add(body.substring(line + 2, line + 2 + size));
            at = line + 2 + size + 2;
            if (size == 0) {
                assertThat(body.substring(line + 2)).as("the end of the body").isEqualTo("\r\n");
                return chunks;
            }
        }
    }

    /**
     * A sandbox's server as a raw socket: reads one request (headers and a Content-Length body) and answers with
     * {@code answer} in a single write, or with {@code answer} and, once {@link #second} was counted down, {@code
     * rest} in a second write; then keeps the connection open until closed.
     */
    private static final class OneShotUpstream implements AutoCloseable {
        private final ServerSocket socket = new ServerSocket(0, 4, InetAddress.getLoopbackAddress());
        private final CountDownLatch done = new CountDownLatch(1);
        final CountDownLatch second = new CountDownLatch(1);
        private final Thread thread;

        OneShotUpstream(String answer) throws IOException {
            this(answer, "");
        }

        OneShotUpstream(String answer, String rest) throws IOException {
            thread = Thread.ofVirtual().name("one-shot-upstream").start(() -> {
                try (Socket peer = socket.accept()) {
                    readRequest(peer.getInputStream());
                    OutputStream out = peer.getOutputStream();
                    out.write(answer.getBytes(US_ASCII));
                    out.flush();
                    if (!rest.isEmpty() && second.await(30, TimeUnit.SECONDS)) {
                        out.write(rest.getBytes(US_ASCII));
                        out.flush();
                    }
                    done.await(30, TimeUnit.SECONDS);
                } catch (IOException | InterruptedException e) {
                    // the test ends: the socket was closed under us
                }
            });
        }

        int port() {
            return socket.getLocalPort();
        }

        private static void readRequest(InputStream in) throws IOException {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            while (!head.toString(US_ASCII).endsWith("\r\n\r\n")) {
                int b = in.read();
                if (b < 0) {
                    throw new IOException("request ended early");
                }
                head.write(b);
            }
            String headers = head.toString(US_ASCII).toLowerCase(Locale.ROOT);
            int at = headers.indexOf("content-length:");
            if (at >= 0) {
                int length = Integer.parseInt(
                        headers.substring(at + 15, headers.indexOf("\r\n", at)).trim());
                in.readNBytes(length);
            }
        }

        @Override
        public void close() throws Exception {
            done.countDown();
            socket.close();
            thread.join(10_000);
        }
    }
}
