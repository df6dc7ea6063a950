package io.agentenv.envd.http;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.envd.session.Session;
import io.agentenv.envd.session.SessionEndpoints;
import io.agentenv.envd.testing.TestEnvd;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** What envd reads of a request body its endpoint refused without reading, over raw sockets. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class RequestDrainTest {
    /** How long a test waits for an answer or for the connection to end before it fails. */
    private static final int DEADLINE_MILLIS = 30_000;

    private TestEnvd envd;

    @BeforeEach
    void start() throws Exception {
        Session session = new Session(Clock.systemUTC());
        envd = TestEnvd.start(session, Optional.empty(), (rpcs, routes) -> {
            new SessionEndpoints(session).register(routes);
            // an upload that is taken in and then refused half-way, as a full disk refuses one
            routes.add("POST", "/admitted-then-full", Access.PUBLIC, (request, response) -> {
                request.admitBody();
                request.body().readNBytes(1 << 20);
                throw new HttpException(507, "not enough disk space");
            });
        });
        envd.client().post("/init", "{\"accessToken\":\"s3cret\"}", Map.of());
    }

    @AfterEach
    void stop() throws Exception {
        envd.close();
    }

    @Test
    void a_refused_request_with_a_huge_body_gets_connection_close_after_a_bounded_read() throws Exception {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), envd.port())) {
            socket.setSoTimeout(DEADLINE_MILLIS);
            OutputStream out = socket.getOutputStream();
            out.write(("GET /envs HTTP/1.1\r\nHost: envd\r\nContent-Length: " + (1L << 40) + "\r\n\r\n")
                    .getBytes(US_ASCII));
            AtomicLong sent = new AtomicLong();
            Thread sender = Thread.ofVirtual().start(() -> {
                byte[] chunk = new byte[64 << 10];
                try {
                    while (true) {
                        out.write(chunk);
                        sent.addAndGet(chunk.length);
                    }
                } catch (IOException closedByEnvd) {
                    // the end this test waits for
                }
            });

            InputStream in = socket.getInputStream();
            String head = readHead(in);

            assertThat(head).startsWith("HTTP/1.1 401").containsIgnoringCase("\r\nConnection: close\r\n");
            assertThat(new String(in.readNBytes(contentLength(head)), US_ASCII)).startsWith("{\"code\":401");
            assertThat(sender.join(Duration.ofMillis(DEADLINE_MILLIS)))
                    .as("envd ended the connection")
                    .isTrue();
            // what envd read (64 KiB + 4 MiB) plus what the two sockets' buffers hold, not the terabyte announced
            assertThat(sent.get()).isLessThan(64L << 20);
        }
    }

    @Test
    void an_admitted_upload_refused_half_way_is_read_on_so_its_answer_is_not_lost() throws Exception {
        long length = 64L << 20;
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), envd.port())) {
            socket.setSoTimeout(DEADLINE_MILLIS);
            OutputStream out = socket.getOutputStream();
            out.write(("POST /admitted-then-full HTTP/1.1\r\nHost: envd\r\nContent-Length: " + length + "\r\n\r\n")
                    .getBytes(US_ASCII));
            AtomicLong sent = new AtomicLong();
            AtomicReference<IOException> sendFailure = new AtomicReference<>();
            // a sender that only sends, as a proxy's upload does while its reader is slow to see the answer
            Thread sender = Thread.ofVirtual().start(() -> {
                byte[] chunk = new byte[64 << 10];
                try {
                    while (sent.get() < length) {
                        out.write(chunk);
                        sent.addAndGet(chunk.length);
                    }
                } catch (IOException e) {
                    sendFailure.set(e);
                }
            });
            assertThat(sender.join(Duration.ofMillis(DEADLINE_MILLIS))).isTrue();

            assertThat(sendFailure.get()).as("the whole body was taken").isNull();
            InputStream in = socket.getInputStream();
            String head = readHead(in);
            assertThat(head).startsWith("HTTP/1.1 507").containsIgnoringCase("\r\nConnection: close\r\n");
            assertThat(new String(in.readNBytes(contentLength(head)), US_ASCII)).contains("not enough disk space");
        }
    }

    @Test
    void a_small_unread_body_is_drained_and_the_connection_serves_the_next_request() throws Exception {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), envd.port())) {
            socket.setSoTimeout(DEADLINE_MILLIS);
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            out.write("GET /envs HTTP/1.1\r\nHost: envd\r\nContent-Length: 1000\r\n\r\n".getBytes(US_ASCII));
            out.write(new byte[1000]);
            String refused = readHead(in);
            in.readNBytes(contentLength(refused));

            out.write("GET /health HTTP/1.1\r\nHost: envd\r\n\r\n".getBytes(US_ASCII));

            assertThat(refused).startsWith("HTTP/1.1 401").doesNotContainIgnoringCase("Connection: close");
            assertThat(readHead(in)).startsWith("HTTP/1.1 204");
        }
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(US_ASCII).endsWith("\r\n\r\n")) {
            int next = in.read();
            if (next < 0) {
                throw new IOException("connection ended inside the response head: " + head.toString(US_ASCII));
            }
            head.write(next);
        }
        return head.toString(US_ASCII);
    }

    private static int contentLength(String head) {
        for (String line : head.split("\r\n")) {
            if (line.regionMatches(true, 0, "Content-Length:", 0, 15)) {
                return Integer.parseInt(line.substring(15).trim());
            }
        }
        throw new AssertionError("no Content-Length in " + head);
    }
}
