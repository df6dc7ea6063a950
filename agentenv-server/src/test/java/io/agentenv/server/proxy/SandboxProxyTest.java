package io.agentenv.server.proxy;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentenv.backend.mock.Gate;
import io.agentenv.backend.mock.MockOp;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.spi.SandboxId;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.InputStreamRequestContent;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.io.ByteBufferPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The proxy over real HTTP: the server with the mock backend, every sandbox's guest endpoint a {@link FakeUpstream}. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SandboxProxyTest {
    private static final int ENVD = ProxySettings.ENVD_PORT;

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

    private String token(String id) {
        return h.tokens.envdAccessToken(id);
    }

    private ContentResponse envd(String id, String path) throws Exception {
        return h.routed(id, ENVD, path)
                .headers(x -> x.put("X-Access-Token", token(id)))
                .send();
    }

    private ContentResponse api(HttpMethod method, String path, String body) throws Exception {
        return h.request(path)
                .method(method)
                .headers(x -> x.put("X-API-Key", ProxyHarness.KEY))
                .body(new StringRequestContent("application/json", body))
                .send();
    }

    private static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // poll the condition every millisecond
        }
    }

    /**
     * A streamed GET routed to {@code port} of {@code id}, read with the JDK client (it hands each chunk over as it
     * arrives; Jetty's InputStreamResponseListener is used for bulk bodies only).
     */
    private HttpResponse<InputStream> stream(String id, int port, String path, Map<String, String> headers)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(h.base + path))
                .timeout(Duration.ofSeconds(30))
                .header("E2b-Sandbox-Id", id)
                .header("E2b-Sandbox-Port", String.valueOf(port));
        headers.forEach(request::header);
        return h.jdk.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
    }

    private static String readExactly(InputStream in, int bytes) throws IOException {
        return new String(in.readNBytes(bytes), UTF_8);
    }

    @Test
    void routing_headers_win_over_control_plane_routes_and_reach_envd() throws Exception {
        String id = h.createId();
        ContentResponse proxied = h.routed(id, ENVD, "/health").send();
        assertThat(proxied.getStatus()).isEqualTo(200);
        assertThat(proxied.getContentAsString()).isEqualTo("upstream");

        ContentResponse own = h.request("/health").send();
        assertThat(own.getStatus()).isEqualTo(204);
    }

    @Test
    void host_routing_and_proxy_paths_reach_other_ports_of_the_sandbox() throws Exception {
        String id = h.createId();
        int port = h.upstream.port();
        ContentResponse byHost = h.request("/health?x=1")
                .headers(x -> x.put(HttpHeader.HOST, port + "-" + id + "." + ProxyHarness.DOMAIN))
                .send();
        assertThat(byHost.getContentAsString()).isEqualTo("upstream");
        ContentResponse byPath =
                h.request("/proxy/" + id + "/" + port + "/health").send();
        assertThat(byPath.getContentAsString()).isEqualTo("upstream");
        assertThat(h.upstream.paths).containsExactly("/health?x=1", "/health");
    }

    @Test
    void without_a_configured_domain_the_hosts_the_sdk_builds_reach_the_sandbox() throws Exception {
        try (ProxyHarness any = new ProxyHarness(dir.resolve("any-domain"), ProxySettings.defaults(List.of()))) {
            String id = any.createId();
            int port = any.upstream.port();
            for (String host :
                    List.of(port + "-" + id + ".localhost:" + any.api.port(), port + "-" + id + ".e2b.app")) {
                ContentResponse byHost = any.request("/health?x=1")
                        .headers(x -> x.put(HttpHeader.HOST, host))
                        .send();
                assertThat(byHost.getContentAsString()).as(host).isEqualTo("upstream");
            }
            assertThat(any.upstream.paths).containsExactly("/health?x=1", "/health?x=1");
            assertThat(any.request("/health")
                            .headers(x -> x.put(HttpHeader.HOST, "localhost:" + any.api.port()))
                            .send()
                            .getStatus())
                    .isEqualTo(204);
        }
    }

    @Test
    void an_unknown_sandbox_is_502_with_the_body_the_sdk_expects() throws Exception {
        String unknown = "zzzzzzzzzzzzzzzzzzzz";
        ContentResponse response = h.routed(unknown, ENVD, "/health").send();
        assertThat(response.getStatus()).isEqualTo(502);
        assertThat(response.getHeaders().get(HttpHeader.CONTENT_TYPE)).startsWith("application/json");
        assertThat(h.json.readTree(response.getContentAsString()))
                .isEqualTo(h.json.readTree(
                        "{\"code\":502,\"message\":\"The sandbox was not found\",\"sandboxId\":\"" + unknown + "\"}"));
    }

    @Test
    void killed_sandboxes_and_paused_ones_without_auto_resume_are_502() throws Exception {
        String killed = h.createId();
        String paused = h.createId();
        assertThat(api(HttpMethod.DELETE, "/sandboxes/" + killed, "").getStatus())
                .isEqualTo(204);
        assertThat(api(HttpMethod.POST, "/sandboxes/" + paused + "/pause", "{}").getStatus())
                .isEqualTo(204);

        assertThat(envd(killed, "/health").getStatus()).isEqualTo(502);
        assertThat(envd(paused, "/health").getStatus()).isEqualTo(502);
        assertThat(h.orchestrator.get(new SandboxId(paused)).state()).isEqualTo(SandboxState.PAUSED);
    }

    @Test
    void malformed_routing_is_400() throws Exception {
        assertThat(h.request("/health")
                        .headers(x -> x.put("E2b-Sandbox-Id", "abc"))
                        .send()
                        .getStatus())
                .isEqualTo(400);
        assertThat(h.routed("not-an-id", ENVD, "/").send().getStatus()).isEqualTo(400);
        assertThat(h.request("/proxy/abcdefghij0123456789/99999/").send().getStatus())
                .isEqualTo(400);
    }

    @Test
    void hop_by_hop_routing_and_credential_headers_are_stripped_and_forwarded_ones_added() throws Exception {
        String id = h.createId();
        int port = h.upstream.port();
        String seen = h.routed(id, port, "/headers?q=1")
                .headers(x -> x.put(HttpHeader.CONNECTION, "keep-alive, X-Hop")
                        .put("X-Hop", "secret-hop")
                        .put("TE", "trailers")
                        .put("X-API-Key", ProxyHarness.KEY)
                        .put("X-Access-Token", token(id))
                        .put("X-App", "kept"))
                .send()
                .getContentAsString();
        assertThat(seen)
                .contains(
                        "x-app: kept",
                        "x-forwarded-for: 127.0.0.1",
                        "x-forwarded-proto: http",
                        "x-forwarded-method: GET",
                        "x-forwarded-uri: /headers?q=1",
                        "x-forwarded-host: 127.0.0.1:" + h.api.port());
        assertThat(seen)
                .doesNotContain(
                        "x-hop", "te: trailers", "e2b-sandbox-id", "e2b-sandbox-port", "x-api-key", "x-access-token");

        String appKey = h.routed(id, port, "/headers")
                .headers(x -> x.put("X-API-Key", "the-apps-own-key"))
                .send()
                .getContentAsString();
        assertThat(appKey).contains("x-api-key: the-apps-own-key");
    }

    @Test
    void a_host_mask_replaces_the_host_of_requests_to_other_ports_but_not_envds() throws Exception {
        String id = h.create("\"network\":{\"maskRequestHost\":\"localhost:${PORT}\"}")
                .get("sandboxID")
                .asText();
        int port = h.upstream.port();
        String byHeaders = h.routed(id, port, "/headers").send().getContentAsString();
        assertThat(byHeaders).contains("host: localhost:" + port, "x-forwarded-host: 127.0.0.1:" + h.api.port());
        String byPath =
                h.request("/proxy/" + id + "/" + port + "/headers").send().getContentAsString();
        assertThat(byPath).contains("host: localhost:" + port);
        String envd = h.routed(id, ENVD, "/headers")
                .headers(x -> x.put("X-Access-Token", token(id)))
                .send()
                .getContentAsString();
        assertThat(envd).doesNotContain("host: localhost");

        String unmasked = h.createId();
        assertThat(h.routed(unmasked, port, "/headers").send().getContentAsString())
                .doesNotContain("host: localhost");
    }

    @Test
    void envd_needs_the_sandboxs_access_token_which_is_forwarded_only_when_valid() throws Exception {
        String id = h.createId();
        assertThat(h.routed(id, ENVD, "/headers").send().getStatus()).isEqualTo(401);
        assertThat(h.routed(id, ENVD, "/headers")
                        .headers(x -> x.put("X-Access-Token", "wrong"))
                        .send()
                        .getStatus())
                .isEqualTo(401);
        String otherToken = token(h.createId());
        assertThat(h.routed(id, ENVD, "/headers")
                        .headers(x -> x.put("X-Access-Token", otherToken))
                        .send()
                        .getStatus())
                .as("another sandbox's token")
                .isEqualTo(401);
        ContentResponse ok = envd(id, "/headers");
        assertThat(ok.getStatus()).isEqualTo(200);
        assertThat(ok.getContentAsString()).contains("x-access-token: " + token(id));
    }

    @Test
    void sandboxes_without_public_traffic_need_their_traffic_token_on_other_ports() throws Exception {
        JsonNode created = h.create("\"network\":{\"allowPublicTraffic\":false}");
        String id = created.get("sandboxID").asText();
        String traffic = created.get("trafficAccessToken").asText();
        int port = h.upstream.port();
        assertThat(h.routed(id, port, "/headers").send().getStatus()).isEqualTo(403);
        assertThat(h.routed(id, port, "/headers")
                        .headers(x -> x.put("e2b-traffic-access-token", "nope"))
                        .send()
                        .getStatus())
                .isEqualTo(403);
        ContentResponse ok = h.routed(id, port, "/headers")
                .headers(x -> x.put("e2b-traffic-access-token", traffic))
                .send();
        assertThat(ok.getStatus()).isEqualTo(200);
        assertThat(ok.getContentAsString()).doesNotContain(traffic);
        assertThat(envd(id, "/health").getStatus())
                .as("envd needs its own token only")
                .isEqualTo(200);
    }

    @Test
    void a_slow_chunked_response_arrives_chunk_by_chunk() throws Exception {
        String id = h.createId();
        HttpResponse<InputStream> response = stream(id, h.upstream.port(), "/chunks", Map.of());
        assertThat(response.statusCode()).isEqualTo(200);
        try (InputStream in = response.body()) {
            assertThat(readExactly(in, 6))
                    .as("read while the upstream still holds the rest")
                    .isEqualTo("first\n");
            h.upstream.release();
            assertThat(new String(in.readAllBytes(), UTF_8)).isEqualTo("second\n");
        }
    }

    @Test
    void server_sent_events_stream_one_event_at_a_time() throws Exception {
        String id = h.createId();
        HttpResponse<InputStream> response = stream(id, h.upstream.port(), "/sse", Map.of());
        assertThat(response.headers().firstValue("content-type").orElseThrow()).startsWith("text/event-stream");
        try (InputStream in = response.body()) {
            assertThat(readExactly(in, 11)).isEqualTo("data: one\n\n");
            h.upstream.release();
            assertThat(new String(in.readAllBytes(), UTF_8)).isEqualTo("data: two\n\n");
        }
    }

    @Test
    void large_uploads_and_downloads_stream_through_intact() throws Exception {
        String id = h.createId();
        long size = 48L * 1024 * 1024;
        MessageDigest expected = MessageDigest.getInstance("SHA-256");
        byte[] chunk = FakeUpstream.pattern(65536);
        for (long done = 0; done < size; done += chunk.length) {
            expected.update(chunk);
        }
        String digest = HexFormat.of().formatHex(expected.digest());

        InputStream body = new InputStream() {
            private long sent;

            @Override
            public int read() {
                throw new UnsupportedOperationException("bulk reads only");
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (sent >= size) {
                    return -1;
                }
                int n = (int) Math.min(Math.min(len, chunk.length - (sent % chunk.length)), size - sent);
                System.arraycopy(chunk, (int) (sent % chunk.length), b, off, n);
                sent += n;
                return n;
            }
        };
        ContentResponse uploaded = h.routed(id, h.upstream.port(), "/upload")
                .method(HttpMethod.POST)
                .body(new InputStreamRequestContent(
                        "application/octet-stream", body, new ByteBufferPool.Sized(null, false, 65536)))
                .send();
        assertThat(uploaded.getContentAsString()).isEqualTo(size + " " + digest);

        InputStreamResponseListener listener = new InputStreamResponseListener();
        h.routed(id, h.upstream.port(), "/download?bytes=" + size).send(listener);
        assertThat(listener.get(10, TimeUnit.SECONDS).getStatus()).isEqualTo(200);
        MessageDigest received = MessageDigest.getInstance("SHA-256");
        long total = 0;
        try (InputStream in = listener.getInputStream()) {
            byte[] buffer = new byte[65536];
            for (int n; (n = in.read(buffer)) > 0; ) {
                received.update(buffer, 0, n);
                total += n;
            }
        }
        assertThat(total).isEqualTo(size);
        assertThat(HexFormat.of().formatHex(received.digest())).isEqualTo(digest);
    }

    @Test
    void killing_a_sandbox_cuts_its_open_streams_abruptly_and_then_it_is_502() throws Exception {
        String id = h.createId();
        InputStream in = openStream(id);
        api(HttpMethod.DELETE, "/sandboxes/" + id, "");
        assertThatThrownBy(in::readAllBytes).as("no clean end of the body").isInstanceOf(IOException.class);
        await(() -> h.proxy.openExchanges(new SandboxId(id)) == 0, "no open exchanges");
        assertThat(h.routed(id, ENVD, "/health").send().getStatus()).isEqualTo(502);
    }

    @Test
    void pausing_a_sandbox_cuts_its_open_streams_too() throws Exception {
        String id = h.createId();
        InputStream in = openStream(id);
        assertThat(api(HttpMethod.POST, "/sandboxes/" + id + "/pause", "{}").getStatus())
                .isEqualTo(204);
        assertThatThrownBy(in::readAllBytes).isInstanceOf(IOException.class);
        assertThat(h.routed(id, ENVD, "/health").send().getStatus()).isEqualTo(502);
    }

    /** Opens /chunks on {@code id}'s envd and reads the first part; the upstream holds the rest. */
    private InputStream openStream(String id) throws Exception {
        HttpResponse<InputStream> response = stream(id, ENVD, "/chunks", Map.of("X-Access-Token", token(id)));
        assertThat(response.statusCode()).isEqualTo(200);
        InputStream in = response.body();
        assertThat(readExactly(in, 6)).isEqualTo("first\n");
        assertThat(h.proxy.openExchanges(new SandboxId(id))).isEqualTo(1);
        return in;
    }

    @Test
    void a_paused_auto_resume_sandbox_resumes_on_its_first_request_with_300_s_ttl_or_more() throws Exception {
        String id = h.create("\"timeout\":30,\"autoResume\":{\"enabled\":true}")
                .get("sandboxID")
                .asText();
        assertThat(api(HttpMethod.POST, "/sandboxes/" + id + "/pause", "{}").getStatus())
                .isEqualTo(204);

        ContentResponse response = h.routed(id, ENVD, "/health").send();

        assertThat(response.getStatus()).isEqualTo(200);
        var view = h.orchestrator.get(new SandboxId(id));
        assertThat(view.state()).isEqualTo(SandboxState.RUNNING);
        assertThat(view.expiresAt().orElseThrow()).isAfter(Instant.now().plusSeconds(290));
    }

    @Test
    void an_upstream_that_sends_no_headers_in_time_is_504() throws Exception {
        h.close();
        h = new ProxyHarness(
                dir.resolve("short"),
                new ProxySettings(
                        List.of(ProxyHarness.DOMAIN),
                        ENVD,
                        Duration.ofSeconds(5),
                        Duration.ofMillis(300),
                        Duration.ofSeconds(30),
                        Duration.ofSeconds(5),
                        Duration.ofSeconds(300)));
        String id = h.createId();
        ContentResponse response = h.routed(id, h.upstream.port(), "/hold").send();
        assertThat(response.getStatus()).isEqualTo(504);
        assertThat(h.json.readTree(response.getContentAsString()).get("code").asInt())
                .isEqualTo(504);
    }

    @Test
    void a_port_nobody_listens_on_is_502() throws Exception {
        String id = h.createId();
        int closed;
        try (ServerSocket probe = new ServerSocket(0)) {
            closed = probe.getLocalPort();
        }
        ContentResponse response = h.routed(id, closed, "/").send();
        assertThat(response.getStatus()).isEqualTo(502);
        assertThat(response.getContentAsString()).contains("is not reachable");
    }

    @Test
    void connections_are_reused_within_a_runtime_generation_but_never_across_generations() throws Exception {
        String id = h.createId();
        envd(id, "/health");
        envd(id, "/health");
        List<Integer> first = List.copyOf(h.upstream.clientPorts);
        assertThat(first).hasSize(2);
        assertThat(first.get(1)).as("keep-alive within a generation").isEqualTo(first.get(0));

        assertThat(api(HttpMethod.POST, "/sandboxes/" + id + "/pause", "{}").getStatus())
                .isEqualTo(204);
        assertThat(api(HttpMethod.POST, "/sandboxes/" + id + "/connect", "{\"timeout\":60}")
                        .getStatus())
                .isEqualTo(201);
        envd(id, "/health");

        assertThat(h.upstream.clientPorts).hasSize(3);
        assertThat(h.upstream.clientPorts.get(2))
                .as("a new connection after resume")
                .isNotIn(first);
    }

    @Test
    void websocket_upgrades_are_bridged_with_the_subprotocol_the_sandbox_chose() throws Exception {
        String id = h.createId();
        java.util.concurrent.LinkedBlockingQueue<String> received = new java.util.concurrent.LinkedBlockingQueue<>();
        java.net.http.WebSocket ws = h.jdk.newWebSocketBuilder()
                .header("E2b-Sandbox-Id", id)
                .header("E2b-Sandbox-Port", String.valueOf(h.upstream.port()))
                .header("X-API-Key", ProxyHarness.KEY)
                .subprotocols("echo.v1", "echo.v0")
                .buildAsync(
                        URI.create("ws://127.0.0.1:" + h.api.port() + "/ws"), new java.net.http.WebSocket.Listener() {
                            @Override
                            public java.util.concurrent.CompletionStage<?> onText(
                                    java.net.http.WebSocket socket, CharSequence data, boolean last) {
                                received.add(data.toString());
                                socket.request(1);
                                return null;
                            }
                        })
                .get(10, TimeUnit.SECONDS);
        assertThat(ws.getSubprotocol()).isEqualTo("echo.v1");
        ws.sendText("hello through the proxy", true).get(10, TimeUnit.SECONDS);
        assertThat(received.poll(10, TimeUnit.SECONDS)).isEqualTo("hello through the proxy");
        HttpFields seen = h.upstream.wsHeaders.getFirst();
        assertThat(seen.get("E2b-Sandbox-Id")).isNull();
        assertThat(seen.get("X-API-Key")).isNull();
        assertThat(seen.get(HttpHeader.X_FORWARDED_FOR)).isEqualTo("127.0.0.1");
        assertThat(h.proxy.openExchanges(new SandboxId(id))).isEqualTo(1);

        api(HttpMethod.DELETE, "/sandboxes/" + id, "");
        await(() -> ws.isInputClosed(), "the bridged WebSocket is cut when the sandbox is killed");
    }

    @Test
    void a_websocket_upgrade_to_a_sandbox_with_a_host_mask_carries_the_mask() throws Exception {
        String id = h.create("\"network\":{\"maskRequestHost\":\"${PORT}.app.example\"}")
                .get("sandboxID")
                .asText();
        int port = h.upstream.port();
        java.net.http.WebSocket ws = h.jdk.newWebSocketBuilder()
                .header("E2b-Sandbox-Id", id)
                .header("E2b-Sandbox-Port", String.valueOf(port))
                .buildAsync(
                        URI.create("ws://127.0.0.1:" + h.api.port() + "/ws"), new java.net.http.WebSocket.Listener() {})
                .get(10, TimeUnit.SECONDS);
        HttpFields seen = h.upstream.wsHeaders.getFirst();
        assertThat(seen.get(HttpHeader.HOST)).isEqualTo(port + ".app.example");
        assertThat(seen.get(HttpHeader.X_FORWARDED_HOST)).isEqualTo("127.0.0.1:" + h.api.port());
        ws.abort();
    }

    @Test
    void a_websocket_upgrade_the_sandbox_refuses_answers_with_its_status() throws Exception {
        String id = h.createId();
        var failure = h.jdk.newWebSocketBuilder()
                .header("E2b-Sandbox-Id", id)
                .header("E2b-Sandbox-Port", String.valueOf(h.upstream.port()))
                .buildAsync(
                        URI.create("ws://127.0.0.1:" + h.api.port() + "/not-a-socket"),
                        new java.net.http.WebSocket.Listener() {})
                .handle((socket, error) -> error)
                .get(10, TimeUnit.SECONDS);
        assertThat(failure).isNotNull();
        assertThat(failure.getCause()).isInstanceOf(java.net.http.WebSocketHandshakeException.class);
        assertThat(((java.net.http.WebSocketHandshakeException) failure.getCause())
                        .getResponse()
                        .statusCode())
                .isEqualTo(404);
    }

    @Test
    void a_request_during_a_snapshot_capture_waits_for_it_instead_of_failing() throws Exception {
        String id = h.createId();
        Gate capture = h.backend.holdNext(MockOp.SNAPSHOT);
        try (var threads = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            var snapshot = threads.submit(() -> api(HttpMethod.POST, "/sandboxes/" + id + "/snapshots", "{}"));
            capture.awaitEntered(Duration.ofSeconds(10));
            var request = threads.submit(() -> envd(id, "/health"));
            await(() -> h.upstream.paths.isEmpty() && !request.isDone(), "the request to be waiting");
            capture.release();
            assertThat(request.get(10, TimeUnit.SECONDS).getStatus()).isEqualTo(200);
            assertThat(snapshot.get(10, TimeUnit.SECONDS).getStatus()).isEqualTo(201);
        }
    }

    @Test
    void a_request_awaiting_its_response_when_the_sandbox_dies_gets_the_not_found_502() throws Exception {
        String id = h.createId();
        try (var threads = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            var waiting = threads.submit(() -> envd(id, "/hold"));
            await(() -> h.upstream.paths.contains("/hold"), "the request to reach the upstream");
            api(HttpMethod.DELETE, "/sandboxes/" + id, "");
            ContentResponse response = waiting.get(10, TimeUnit.SECONDS);
            assertThat(response.getStatus()).isEqualTo(502);
            assertThat(h.json.readTree(response.getContentAsString())
                            .get("sandboxId")
                            .asText())
                    .isEqualTo(id);
        }
    }
}
