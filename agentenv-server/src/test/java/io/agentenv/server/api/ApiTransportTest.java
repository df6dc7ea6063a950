package io.agentenv.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayInputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Auth, routing, body handling and the error envelope, over real HTTP. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ApiTransportTest {
    @TempDir
    Path dataDir;

    private TestServer server;

    @BeforeEach
    void start() throws Exception {
        server = new TestServer(dataDir);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    private void assertError(HttpResponse<String> response, int status) throws Exception {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        assertThat(response.headers().firstValue("content-type"))
                .hasValueSatisfying(v -> assertThat(v).startsWith("application/json"));
        JsonNode body = server.parse(response);
        assertThat(body.get("code").asInt()).isEqualTo(status);
        assertThat(body.get("message").asText()).isNotBlank();
    }

    @Test
    void health_answers_204_without_a_key_and_without_a_body() throws Exception {
        HttpResponse<String> response = server.send(
                HttpRequest.newBuilder(server.base.resolve("/health")).GET().build());
        assertThat(response.statusCode()).isEqualTo(204);
        assertThat(response.body()).isEmpty();
    }

    @Test
    void metrics_need_no_key_and_count_sandboxes_by_state_and_requests_by_route() throws Exception {
        server.create();
        HttpResponse<String> response = server.send(
                HttpRequest.newBuilder(server.base.resolve("/metrics")).GET().build());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("content-type").orElseThrow()).startsWith("text/plain");
        assertThat(response.body())
                .contains("aenv_sandboxes{state=\"running\"} 1")
                .contains("aenv_sandboxes{state=\"paused\"} 0")
                .contains("aenv_http_requests_total{method=\"POST\",route=\"/v2/sandboxes\",status=\"201\"} 1")
                .as("a lone server is no node")
                .doesNotContain("aenv_node_");
    }

    @Test
    void responses_tell_http_1_1_clients_how_long_an_idle_connection_stays_open() throws Exception {
        HttpResponse<String> health = server.send(HttpRequest.newBuilder(server.base.resolve("/health"))
                .version(java.net.http.HttpClient.Version.HTTP_1_1)
                .GET()
                .build());
        HttpResponse<String> refused = server.send(HttpRequest.newBuilder(server.base.resolve("/v2/sandboxes"))
                .version(java.net.http.HttpClient.Version.HTTP_1_1)
                .GET()
                .build());

        assertThat(health.headers().firstValue("keep-alive")).hasValue("timeout=60");
        assertThat(refused.statusCode()).isEqualTo(401);
        assertThat(refused.headers().firstValue("keep-alive")).hasValue("timeout=60");
        // a client keeps the connection no longer than told, so the server never closes one a client still sends on
        assertThat(KeepAliveHint.ADVERTISED.plusSeconds(10)).isLessThan(KeepAliveHint.CONNECTION_IDLE_TIMEOUT);
    }

    @Test
    void a_request_without_a_key_is_401_json() throws Exception {
        HttpResponse<String> response = server.send(HttpRequest.newBuilder(server.base.resolve("/v2/sandboxes"))
                .GET()
                .build());
        assertError(response, 401);
    }

    @Test
    void a_request_with_a_wrong_key_is_401_json() throws Exception {
        HttpResponse<String> response = server.send(HttpRequest.newBuilder(server.base.resolve("/v2/sandboxes"))
                .header("X-API-Key", TestServer.KEY + "x")
                .GET()
                .build());
        assertError(response, 401);
        assertThat(response.body()).doesNotContain(TestServer.KEY);
    }

    @Test
    void a_request_with_the_key_twice_is_401_even_when_both_are_right() throws Exception {
        HttpResponse<String> response = server.send(HttpRequest.newBuilder(server.base.resolve("/v2/sandboxes"))
                .header("X-API-Key", TestServer.KEY)
                .header("X-API-Key", TestServer.KEY)
                .GET()
                .build());
        assertError(response, 401);
        assertThat(server.parse(response).get("message").asText()).contains("exactly once");
    }

    @Test
    void the_key_header_name_is_case_insensitive() throws Exception {
        HttpResponse<String> response = server.send(HttpRequest.newBuilder(server.base.resolve("/v2/sandboxes"))
                .header("x-api-key", TestServer.KEY)
                .GET()
                .build());
        assertThat(response.statusCode()).isEqualTo(200);
    }

    @Test
    void an_unknown_route_is_404_naming_method_and_path() throws Exception {
        HttpResponse<String> response = server.get("/no/such/route");
        assertError(response, 404);
        assertThat(server.parse(response).get("message").asText()).isEqualTo("route not found: GET /no/such/route");
    }

    @Test
    void a_known_route_with_the_wrong_method_is_405_with_allow() throws Exception {
        HttpResponse<String> response =
                server.send(server.request("/v2/sandboxes").DELETE().build());
        assertError(response, 405);
        assertThat(response.headers().firstValue("allow")).contains("GET, POST");
    }

    @Test
    void errors_jetty_raises_before_routing_use_the_json_envelope_too() throws Exception {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", server.base.getPort())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write("GARBAGE\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(answer)
                    .startsWith("HTTP/1.1 400")
                    .contains("application/json")
                    .endsWith("{\"code\":400,\"message\":\"bad request\"}");
        }
    }

    @Test
    void malformed_json_is_400() throws Exception {
        HttpResponse<String> response = server.post("/v2/sandboxes", "{\"templateID\": \"base\",");
        assertError(response, 400);
        assertThat(server.parse(response).get("message").asText()).startsWith("malformed JSON body");
    }

    @Test
    void json_with_more_after_the_object_is_400_saying_so() throws Exception {
        HttpResponse<String> response = server.post("/v2/sandboxes", "{\"templateID\": \"base\"} {}");
        assertError(response, 400);
        assertThat(server.parse(response).get("message").asText())
                .isEqualTo("malformed JSON body: more after the JSON value");
    }

    @Test
    void a_wrongly_typed_field_is_400_naming_the_field() throws Exception {
        HttpResponse<String> response = server.post("/v2/sandboxes", "{\"templateID\":\"base\",\"timeout\":\"soon\"}");
        assertError(response, 400);
        assertThat(server.parse(response).get("message").asText())
                .isEqualTo("invalid value for field 'timeout': expected an integer");

        HttpResponse<String> nested = server.post("/v2/sandboxes", "{\"templateID\":\"base\",\"metadata\":{\"a\":1}}");
        assertError(nested, 400);
        assertThat(server.parse(nested).get("message").asText()).contains("'metadata.a'");
    }

    @Test
    void a_body_that_is_not_an_object_is_400() throws Exception {
        assertError(server.post("/v2/sandboxes", "[1,2]"), 400);
        assertError(server.post("/v2/sandboxes", ""), 400);
        assertError(server.post("/v2/sandboxes", "null"), 400);
    }

    @Test
    void fields_in_no_schema_are_ignored() throws Exception {
        // E2B's own schema fields that ask for what this server lacks (mcp, ...) are 400: RequestFieldsTest
        HttpResponse<String> response =
                server.post("/v2/sandboxes", "{\"templateID\":\"base\",\"future\":true,\"newer\":{\"x\":1}}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
    }

    @Test
    void a_chunked_request_body_is_accepted() throws Exception {
        byte[] body = "{\"templateID\":\"base\",\"metadata\":{\"via\":\"chunked\"}}".getBytes(StandardCharsets.UTF_8);
        HttpRequest request = server.request("/v2/sandboxes")
                .header("Content-Type", "application/json")
                // an InputStream publisher has no known length, so the client sends Transfer-Encoding: chunked
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body)))
                .build();
        HttpResponse<String> response = server.send(request);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        String id = server.parse(response).get("sandboxID").asText();
        assertThat(server.parse(server.get("/sandboxes/" + id))
                        .get("metadata")
                        .get("via")
                        .asText())
                .isEqualTo("chunked");
    }

    @Test
    void an_oversized_body_is_413_whether_declared_or_chunked() throws Exception {
        String big = "{\"templateID\":\"base\",\"metadata\":{\"k\":\"" + "x".repeat(70_000) + "\"}}";
        assertError(server.post("/v2/sandboxes", big), 413);
        byte[] bytes = big.getBytes(StandardCharsets.UTF_8);
        HttpResponse<String> chunked = server.send(server.request("/v2/sandboxes")
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(bytes)))
                .build());
        assertError(chunked, 413);
    }

    @Test
    void a_backend_failure_is_a_generic_500_with_a_reference_and_no_internal_text() throws Exception {
        server.backend.failNext(
                io.agentenv.backend.mock.MockOp.START,
                new io.agentenv.spi.BackendException.Terminal("crun failed at /secret/host/path"));
        HttpResponse<String> response = server.post("/v2/sandboxes", "{\"templateID\":\"base\"}");
        assertError(response, 500);
        assertThat(response.body()).doesNotContain("/secret/host/path").doesNotContain("crun");
    }

    @Test
    void a_backend_at_capacity_is_429_naming_the_limit_without_retry_after_for_the_sdk() throws Exception {
        server.backend.failNext(
                io.agentenv.backend.mock.MockOp.PREPARE,
                new io.agentenv.spi.BackendException.Exhausted(
                        "all 3 sandbox slots of this server are in use", "no free network slot in /run/secret", null));
        HttpResponse<String> response = server.post("/v2/sandboxes", "{\"templateID\":\"base\"}");
        assertError(response, 429);
        assertThat(server.parse(response).get("message").asText())
                .isEqualTo(
                        "too many sandboxes: all 3 sandbox slots of this server are in use; kill or pause a sandbox, then retry");
        assertThat(response.headers().firstValue("retry-after")).isEmpty();
        assertThat(response.body()).doesNotContain("/run/secret");
    }
}
