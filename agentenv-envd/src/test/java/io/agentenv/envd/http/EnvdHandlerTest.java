package io.agentenv.envd.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.envd.protocol.process.ListRequest;
import io.agentenv.envd.protocol.process.ListResponse;
import io.agentenv.envd.session.Session;
import io.agentenv.envd.session.SessionEndpoints;
import io.agentenv.envd.testing.ConnectTestClient;
import io.agentenv.envd.testing.TestEnvd;
import java.io.ByteArrayOutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class EnvdHandlerTest {
    @TempDir
    Path dir;

    private TestEnvd envd;
    private ConnectTestClient client;
    private Path socket;

    @BeforeEach
    void start() throws Exception {
        socket = dir.resolve("envd.sock");
        Session session = new Session(Clock.systemUTC());
        envd = TestEnvd.start(session, Optional.of(socket), (rpcs, routes) -> {
            new SessionEndpoints(session).register(routes);
            rpcs.unary(
                    "process.Process/List",
                    ListRequest.getDefaultInstance(),
                    (request, call) -> ListResponse.getDefaultInstance());
            routes.add("GET", "/boom", Access.TOKEN, (request, response) -> {
                throw new IllegalStateException("secret internal detail");
            });
        });
        client = envd.client();
    }

    @AfterEach
    void stop() throws Exception {
        envd.close();
    }

    @Test
    void health_is_204_without_a_body() throws Exception {
        HttpResponse<byte[]> response = client.get("/health", Map.of());
        assertThat(response.statusCode()).isEqualTo(204);
        assertThat(response.body()).isEmpty();
    }

    @Test
    void the_unix_socket_serves_the_same_routes() throws Exception {
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            channel.connect(UnixDomainSocketAddress.of(socket));
            channel.write(
                    ByteBuffer.wrap("GET /health HTTP/1.1\r\nHost: envd\r\nConnection: close\r\n\r\n".getBytes(UTF_8)));
            ByteArrayOutputStream received = new ByteArrayOutputStream();
            ByteBuffer buffer = ByteBuffer.allocate(4096);
            while (channel.read(buffer) > 0) {
                received.write(buffer.array(), 0, buffer.position());
                buffer.clear();
            }
            assertThat(received.toString(UTF_8)).startsWith("HTTP/1.1 204");
        }
    }

    @Test
    void the_unix_socket_file_is_removed_when_envd_stops() throws Exception {
        assertThat(Files.exists(socket)).isTrue();
        envd.close();
        assertThat(Files.exists(socket)).isFalse();
    }

    @Test
    void once_init_sets_a_token_rpcs_and_routes_need_it_but_health_does_not() throws Exception {
        // given
        assertThat(client.post("/init", "{\"accessToken\":\"s3cret\",\"envVars\":{\"A\":\"1\"}}", Map.of())
                        .statusCode())
                .isEqualTo(204);

        // when / then
        ConnectTestClient.Reply rpc = client.unary("process.Process/List", ListRequest.getDefaultInstance(), Map.of());
        assertThat(rpc.status()).isEqualTo(401);
        assertThat(rpc.text()).contains("\"code\":\"unauthenticated\"");
        assertThat(client.unary(
                                "process.Process/List",
                                ListRequest.getDefaultInstance(),
                                Map.of("X-Access-Token", "wrong"))
                        .status())
                .isEqualTo(401);
        assertThat(client.unary(
                                "process.Process/List",
                                ListRequest.getDefaultInstance(),
                                Map.of("X-Access-Token", "s3cret"))
                        .status())
                .isEqualTo(200);

        HttpResponse<byte[]> envs = client.get("/envs", Map.of());
        assertThat(envs.statusCode()).isEqualTo(401);
        assertThat(new String(envs.body(), UTF_8)).startsWith("{\"code\":401,\"message\":");
        assertThat(new String(
                        client.get("/envs", Map.of("X-Access-Token", "s3cret")).body(), UTF_8))
                .isEqualTo("{\"A\":\"1\"}");
        assertThat(client.get("/health", Map.of()).statusCode()).isEqualTo(204);
    }

    @Test
    void a_second_init_must_present_the_current_token() throws Exception {
        client.post("/init", "{\"accessToken\":\"first\"}", Map.of());

        assertThat(client.post("/init", "{\"accessToken\":\"mine\"}", Map.of()).statusCode())
                .isEqualTo(401);
        assertThat(client.post("/init", "{\"envVars\":{\"X\":\"y\"}}", Map.of()).statusCode())
                .isEqualTo(401);
        assertThat(client.post("/init", "{\"accessToken\":\"first\",\"envVars\":{\"X\":\"y\"}}", Map.of())
                        .statusCode())
                .as("a resume repeating the same token")
                .isEqualTo(204);
        assertThat(client.post(
                                "/init",
                                "{\"accessToken\":\"second\",\"defaultUser\":\"root\"}",
                                Map.of("X-Access-Token", "first"))
                        .statusCode())
                .isEqualTo(204);
        assertThat(envd.session().isAuthorized("second")).isTrue();
        assertThat(envd.session().isAuthorized("first")).isFalse();
        assertThat(envd.session().defaultUser()).contains("root");
    }

    @Test
    void init_env_vars_merge_and_bad_json_is_a_400() throws Exception {
        client.post("/init", "{\"envVars\":{\"A\":\"1\",\"B\":\"2\"}}", Map.of());
        client.post("/init", "{\"envVars\":{\"B\":\"3\"},\"timestamp\":\"2026-01-01T00:00:00Z\"}", Map.of());
        assertThat(envd.session().current().envVars()).isEqualTo(Map.of("A", "1", "B", "3"));

        HttpResponse<byte[]> bad = client.post("/init", "{not json", Map.of());
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(new String(bad.body(), UTF_8))
                .isEqualTo("{\"code\":400,\"message\":\"init body is not valid JSON\"}");
        assertThat(client.post("/init", "{\"envVars\":{\"A\":1}}", Map.of()).statusCode())
                .isEqualTo(400);
    }

    @Test
    void unknown_paths_are_404_json_and_unknown_rpcs_are_unimplemented() throws Exception {
        HttpResponse<byte[]> missing = client.get("/nope", Map.of());
        assertThat(missing.statusCode()).isEqualTo(404);
        assertThat(new String(missing.body(), UTF_8)).contains("\"code\":404");

        ConnectTestClient.Reply rpc = client.unary("process.Process/Nope", ListRequest.getDefaultInstance(), Map.of());
        assertThat(rpc.status()).isEqualTo(404);
        assertThat(rpc.text()).contains("\"code\":\"unimplemented\"");
    }

    @Test
    void a_wrong_method_is_405_and_a_wrong_content_type_is_415() throws Exception {
        HttpResponse<byte[]> wrongMethod = client.get("/init", Map.of());
        assertThat(wrongMethod.statusCode()).isEqualTo(405);
        assertThat(wrongMethod.headers().firstValue("Allow")).contains("POST");

        ConnectTestClient.Reply wrongType =
                client.unaryRaw("process.Process/List", "text/plain", "{}".getBytes(UTF_8), Map.of());
        assertThat(wrongType.status()).isEqualTo(415);
        ConnectTestClient.Reply streamTypeOnUnary =
                client.unaryRaw("process.Process/List", "application/connect+json", "{}".getBytes(UTF_8), Map.of());
        assertThat(streamTypeOnUnary.status()).isEqualTo(415);
    }

    @Test
    void unary_calls_also_speak_binary_proto() throws Exception {
        ConnectTestClient.Reply reply = client.unaryRaw(
                "process.Process/List",
                "application/proto",
                ListRequest.getDefaultInstance().toByteArray(),
                Map.of());
        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.contentType()).isEqualTo("application/proto");
        assertThat(ListResponse.parseFrom(reply.body())).isEqualTo(ListResponse.getDefaultInstance());
    }

    @Test
    void malformed_json_is_invalid_argument_with_status_400() throws Exception {
        ConnectTestClient.Reply reply =
                client.unaryRaw("process.Process/List", "application/json", "{\"x\":".getBytes(UTF_8), Map.of());
        assertThat(reply.status()).isEqualTo(400);
        assertThat(reply.contentType()).startsWith("application/json");
        assertThat(reply.text()).contains("\"code\":\"invalid_argument\"");
    }

    @Test
    void an_endpoint_failure_is_a_500_that_does_not_leak_its_message() throws Exception {
        HttpResponse<byte[]> response = client.get("/boom", Map.of());
        String body = new String(response.body(), UTF_8);
        assertThat(response.statusCode()).isEqualTo(500);
        assertThat(body).contains("internal error (ref ").doesNotContain("secret internal detail");
    }
}
