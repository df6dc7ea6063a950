package io.agentenv.envd.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.envd.protocol.connect.Envelope;
import io.agentenv.envd.protocol.connect.WireFormat;
import io.agentenv.envd.protocol.process.ListRequest;
import io.agentenv.envd.protocol.process.ListResponse;
import io.agentenv.envd.protocol.process.ProcessConfig;
import io.agentenv.envd.protocol.process.ProcessInfo;
import io.agentenv.envd.session.Session;
import io.agentenv.envd.testing.ConnectTestClient;
import io.agentenv.envd.testing.TestEnvd;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Server streams on the JDK's HTTP server: every message reaches the client when it is sent (not when the buffer
 * fills or the stream ends), over TCP and through the unix socket relay, and a relayed connection the client closes
 * leaves nothing open behind it.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class StreamingTest {
    private static final Duration DEADLINE = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    private final CountDownLatch firstReceived = new CountDownLatch(1);
    private TestEnvd envd;
    private Path socket;

    @BeforeEach
    void start() throws Exception {
        socket = dir.resolve("envd.sock");
        envd = TestEnvd.start(new Session(Clock.systemUTC()), Optional.of(socket), (rpcs, routes) ->
        // "List" as a server stream: one message, then it waits until the test has read that message
        {
            rpcs.serverStream("test.Streams/TwoMessages", ListRequest.getDefaultInstance(), (request, call, out) -> {
                out.send(listing("first"));
                if (!firstReceived.await(DEADLINE.toSeconds(), TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the client never read the first message");
                }
                out.send(listing("second"));
            });
            // a client stream that answers with one process per request message it read
            rpcs.clientStream("test.Streams/Count", ListRequest.getDefaultInstance(), (requests, call) -> {
                ListResponse.Builder reply = ListResponse.newBuilder();
                requests.forEachRemaining(
                        r -> reply.addProcesses(ProcessInfo.newBuilder().setTag("seen")));
                return reply.build();
            });
        });
    }

    @AfterEach
    void stop() throws Exception {
        envd.close();
    }

    private static ListResponse listing(String tag) {
        return ListResponse.newBuilder()
                .addProcesses(ProcessInfo.newBuilder()
                        .setTag(tag)
                        .setConfig(ProcessConfig.newBuilder().setCmd("x")))
                .build();
    }

    @Test
    void each_stream_message_is_flushed_to_a_tcp_client_as_it_is_sent() throws Exception {
        ConnectTestClient client = envd.client();
        try (var stream = client.stream(
                "test.Streams/TwoMessages",
                ListRequest.getDefaultInstance(),
                ListResponse.getDefaultInstance(),
                WireFormat.JSON,
                Map.of())) {
            assertThat(stream.next()).map(r -> r.getProcesses(0).getTag()).contains("first");
            firstReceived.countDown();
            assertThat(stream.next()).map(r -> r.getProcesses(0).getTag()).contains("second");
            assertThat(stream.next()).isEmpty();
            assertThat(stream.end().error()).isEmpty();
        }
    }

    @Test
    void each_stream_message_is_flushed_through_the_unix_socket_as_it_is_sent() throws Exception {
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            channel.connect(UnixDomainSocketAddress.of(socket));
            byte[] frame = Envelope.message(WireFormat.JSON.serialize(ListRequest.getDefaultInstance()))
                    .encode();
            String head =
                    "POST /test.Streams/TwoMessages HTTP/1.1\r\nHost: envd\r\nContent-Type: application/connect+json\r\n"
                            + "Content-Length: " + frame.length + "\r\n\r\n";
            channel.write(ByteBuffer.wrap(head.getBytes(UTF_8)));
            channel.write(ByteBuffer.wrap(frame));
            InputStream in = Channels.newInputStream(channel);

            String firstPart = readUntil(in, "first");
            assertThat(firstPart)
                    .startsWith("HTTP/1.1 200")
                    .containsIgnoringCase("transfer-encoding: chunked")
                    .doesNotContain("second");
            firstReceived.countDown();
            assertThat(readUntil(in, "second")).contains("second");
        }
    }

    @Test
    void a_relayed_connection_the_client_closes_is_closed_on_envds_side_too() throws Exception {
        try (UnixSocketRelay relay =
                UnixSocketRelay.open(dir.resolve("second.sock"), new InetSocketAddress("127.0.0.1", envd.port()))) {
            try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                channel.connect(UnixDomainSocketAddress.of(dir.resolve("second.sock")));
                channel.write(ByteBuffer.wrap("GET /nope HTTP/1.1\r\nHost: envd\r\n\r\n".getBytes(UTF_8)));
                assertThat(readUntil(Channels.newInputStream(channel), "\"code\":404"))
                        .startsWith("HTTP/1.1 404");
                assertThat(relay.openConnections()).isEqualTo(1); // keep-alive: the connection stays open
            }
            awaitUntil(() -> relay.openConnections() == 0);
        }
    }

    @Test
    void the_unix_socket_answers_a_client_that_half_closes_after_its_request() throws Exception {
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            channel.connect(UnixDomainSocketAddress.of(socket));
            channel.write(ByteBuffer.wrap("GET /nope HTTP/1.1\r\nHost: envd\r\n\r\n".getBytes(UTF_8)));
            channel.shutdownOutput();
            String all = new String(Channels.newInputStream(channel).readAllBytes(), UTF_8);
            assertThat(all).startsWith("HTTP/1.1 404").contains("\"code\":404");
        }
    }

    @Test
    void a_client_stream_sent_with_chunked_transfer_encoding_is_read_message_by_message() throws Exception {
        java.io.ByteArrayOutputStream frames = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < 3; i++) {
            frames.write(Envelope.message(WireFormat.JSON.serialize(ListRequest.getDefaultInstance()))
                    .encode());
        }
        frames.write(Envelope.endStream("{}".getBytes(UTF_8)).encode());
        byte[] body = frames.toByteArray();
        java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder()
                .version(java.net.http.HttpClient.Version.HTTP_1_1)
                .build();
        // an InputStream publisher has no length: the client sends Transfer-Encoding: chunked
        java.net.http.HttpRequest request = java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + envd.port() + "/test.Streams/Count"))
                .header("Content-Type", "application/connect+json")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofInputStream(
                        () -> new java.io.ByteArrayInputStream(body)))
                .build();

        java.net.http.HttpResponse<InputStream> response =
                http.send(request, java.net.http.HttpResponse.BodyHandlers.ofInputStream());

        assertThat(response.statusCode()).isEqualTo(200);
        try (InputStream in = response.body()) {
            Envelope reply = Envelope.read(in, 1 << 20).orElseThrow();
            assertThat(WireFormat.JSON
                            .parse(reply.payload(), ListResponse.getDefaultInstance())
                            .getProcessesCount())
                    .isEqualTo(3);
            assertThat(Envelope.read(in, 1 << 20).orElseThrow().isEndStream()).isTrue();
        }
        http.close();
    }

    /** Reads until {@code marker} has been received (the server sends no more until the test says so). */
    private static String readUntil(InputStream in, String marker) throws IOException {
        ByteArrayOutputStream received = new ByteArrayOutputStream();
        while (!received.toString(UTF_8).contains(marker)) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("connection ended before '" + marker + "': " + received.toString(UTF_8));
            }
            received.write(b);
        }
        return received.toString(UTF_8);
    }

    private static void awaitUntil(java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime())
                    .as("condition not met within " + DEADLINE)
                    .isLessThan(deadline);
            Thread.onSpinWait();
        }
    }
}
