package io.agentenv.envd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.agentenv.envd.protocol.connect.RpcException;
import io.agentenv.envd.protocol.filesystem.EntryInfo;
import io.agentenv.envd.protocol.filesystem.ListDirRequest;
import io.agentenv.envd.protocol.filesystem.ListDirResponse;
import io.agentenv.spi.EnvdException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/**
 * {@link EnvdClient} through a {@link ProxyTransport} against a fake sandbox proxy: the routing headers and the token on
 * every request, Connect calls in the binary codec, the {@code /files} answer read as the shared {@code EntryInfo}
 * records, and the proxy's and envd's error bodies.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ProxyTransportTest {
    private HttpServer server;
    private final List<Map<String, String>> seen = new CopyOnWriteArrayList<>();
    private final Map<String, Answer> answers = new ConcurrentHashMap<>();
    private EnvdClient client;

    private record Answer(int status, String contentType, byte[] body) {
        Answer(int status, String contentType, String body) {
            this(status, contentType, body.getBytes(StandardCharsets.UTF_8));
        }
    }

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", this::handle);
        server.start();
        client = EnvdClient.throughProxy(
                URI.create("http://127.0.0.1:" + server.getAddress().getPort()),
                "sbx123",
                Optional.of("secret-token"),
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build());
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private void handle(HttpExchange exchange) throws IOException {
        exchange.getRequestBody().readAllBytes();
        seen.add(Map.of(
                "path",
                exchange.getRequestURI().getRawPath(),
                "query",
                String.valueOf(exchange.getRequestURI().getRawQuery()),
                "sandbox",
                String.valueOf(exchange.getRequestHeaders().getFirst("E2b-Sandbox-Id")),
                "port",
                String.valueOf(exchange.getRequestHeaders().getFirst("E2b-Sandbox-Port")),
                "token",
                String.valueOf(exchange.getRequestHeaders().getFirst("X-Access-Token")),
                "type",
                String.valueOf(exchange.getRequestHeaders().getFirst("Content-Type"))));
        Answer answer = answers.getOrDefault(
                exchange.getRequestURI().getRawPath(),
                new Answer(404, "application/json", "{\"code\":404,\"message\":\"no route\"}"));
        byte[] body = answer.body();
        exchange.getResponseHeaders().add("Content-Type", answer.contentType());
        exchange.sendResponseHeaders(answer.status(), body.length == 0 ? -1 : body.length);
        exchange.getResponseBody().write(body);
        exchange.close();
    }

    @Test
    void every_request_carries_the_routing_headers_and_the_token() throws EnvdException {
        answers.put(
                "/files",
                new Answer(
                        200,
                        "application/json",
                        "[{\"path\":\"/home/user/a b.txt\",\"name\":\"a b.txt\",\"type\":\"file\"}]"));

        String written = client.upload(
                "/home/user/a b.txt", Optional.of("user"), 1, () -> new ByteArrayInputStream(new byte[] {'x'}));

        assertThat(written).isEqualTo("/home/user/a b.txt");
        assertThat(seen).singleElement().satisfies(r -> {
            assertThat(r.get("path")).isEqualTo("/files");
            assertThat(r.get("query")).isEqualTo("path=%2Fhome%2Fuser%2Fa%20b.txt&username=user");
            assertThat(r.get("sandbox")).isEqualTo("sbx123");
            assertThat(r.get("port")).isEqualTo(String.valueOf(ProxyTransport.ENVD_PORT));
            assertThat(r.get("token")).isEqualTo("secret-token");
        });
    }

    @Test
    void a_download_copies_the_bytes() throws EnvdException {
        answers.put("/files", new Answer(200, "application/octet-stream", "hello"));
        ByteArrayOutputStream out = new ByteArrayOutputStream();

        client.download("/etc/hostname", Optional.empty(), out);

        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("hello");
    }

    @Test
    void envd_s_error_body_becomes_the_message() {
        answers.put("/files", new Answer(404, "application/json", "{\"code\":404,\"message\":\"path not found\"}"));

        assertThatThrownBy(() -> client.download("/nope", Optional.empty(), new ByteArrayOutputStream()))
                .isInstanceOfSatisfying(EnvdException.Rejected.class, e -> {
                    assertThat(e.status()).isEqualTo(404);
                    assertThat(e.getMessage())
                            .isEqualTo("envd of sandbox sbx123 answered 404 to /files: path not found");
                });
    }

    @Test
    void the_proxy_s_502_says_the_sandbox_is_not_running() {
        answers.put("/files", new Answer(502, "application/json", "{\"code\":502,\"message\":\"sandbox is paused\"}"));

        assertThatThrownBy(() -> client.download("/x", Optional.empty(), new ByteArrayOutputStream()))
                .isInstanceOf(EnvdException.Rejected.class)
                .hasMessage("sandbox sbx123 is not running (sandbox is paused)");
    }

    @Test
    void a_connect_error_is_an_rpc_exception() {
        answers.put(
                "/filesystem.Filesystem/ListDir",
                new Answer(404, "application/json", "{\"code\":\"not_found\",\"message\":\"no such dir\"}"));

        assertThatThrownBy(() -> client.unary(
                        "filesystem.Filesystem/ListDir",
                        ListDirRequest.newBuilder().setPath("/nope").build(),
                        ListDirResponse.getDefaultInstance(),
                        Optional.empty()))
                .isInstanceOf(RpcException.class)
                .hasMessageContaining("no such dir");
    }

    @Test
    void a_unary_call_is_sent_and_answered_in_the_binary_codec() throws EnvdException {
        ListDirResponse listing = ListDirResponse.newBuilder()
                .addEntries(EntryInfo.newBuilder().setPath("/tmp/a").setSize(3))
                .build();
        answers.put("/filesystem.Filesystem/ListDir", new Answer(200, "application/proto", listing.toByteArray()));

        ListDirResponse answer = client.unary(
                "filesystem.Filesystem/ListDir",
                ListDirRequest.newBuilder().setPath("/tmp").build(),
                ListDirResponse.getDefaultInstance(),
                Optional.of("root"));

        assertThat(answer).isEqualTo(listing);
        assertThat(seen)
                .singleElement()
                .satisfies(r -> assertThat(r.get("type")).isEqualTo("application/proto"));
    }

    @Test
    void a_refused_token_is_reported_without_the_token() {
        answers.put("/files", new Answer(401, "application/json", "{\"code\":401,\"message\":\"invalid token\"}"));

        assertThatThrownBy(() -> client.download("/x", Optional.empty(), new ByteArrayOutputStream()))
                .isInstanceOf(EnvdException.Rejected.class)
                .hasMessage("the sandbox refused access (invalid token)")
                .message()
                .doesNotContain("secret-token");
    }
}
