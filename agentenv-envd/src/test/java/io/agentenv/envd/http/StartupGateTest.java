package io.agentenv.envd.http;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.envd.testing.ConnectTestClient;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class StartupGateTest {
    private final CompletableFuture<Handler> services = new CompletableFuture<>();
    private final ExecutorService callers = Executors.newVirtualThreadPerTaskExecutor();
    private EnvdServer server;
    private ConnectTestClient client;

    @BeforeEach
    void start() throws Exception {
        server = new EnvdServer(new InetSocketAddress("127.0.0.1", 0), Optional.empty(), new StartupGate(services),
                Duration.ofMillis(200));
        server.start();
        client = new ConnectTestClient(server.tcpPort());
    }

    @AfterEach
    void stop() throws Exception {
        services.complete(new Answering(200, "late"));
        callers.close();
        server.close();
    }

    @Test
    void health_waits_for_the_services_so_that_its_answer_means_ready() throws Exception {
        Future<HttpResponse<byte[]>> health = callers.submit(() -> client.get("/health", Map.of()));

        assertThat(health).isNotDone(); // the gate holds it while the services are not wired
        services.complete(new Answering(200, "wired"));

        HttpResponse<byte[]> response = health.get(10, TimeUnit.SECONDS);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(new String(response.body(), UTF_8)).isEqualTo("wired /health"); // answered by the services
    }

    @Test
    void a_request_that_arrives_early_waits_for_the_services_and_is_answered_by_them() throws Exception {
        Future<HttpResponse<byte[]>> early = callers.submit(() -> client.get("/envs", Map.of()));
        Future<HttpResponse<byte[]>> postToHealth = callers.submit(() -> client.post("/health", "", Map.of()));

        services.complete(new Answering(200, "wired"));

        HttpResponse<byte[]> response = early.get(10, TimeUnit.SECONDS);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(new String(response.body(), UTF_8)).isEqualTo("wired /envs");
        assertThat(new String(postToHealth.get(10, TimeUnit.SECONDS).body(), UTF_8)).isEqualTo("wired /health");
    }

    @Test
    void once_the_services_are_wired_they_answer_health_too() throws Exception {
        services.complete(new Answering(200, "wired"));

        HttpResponse<byte[]> response = client.get("/health", Map.of());

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(new String(response.body(), UTF_8)).isEqualTo("wired /health");
    }

    @Test
    void when_wiring_failed_a_waiting_request_gets_503_instead_of_hanging() throws Exception {
        Future<HttpResponse<byte[]>> early = callers.submit(() -> client.get("/envs", Map.of()));

        services.completeExceptionally(new IllegalStateException("no /etc/passwd"));

        HttpResponse<byte[]> response = early.get(10, TimeUnit.SECONDS);
        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(new String(response.body(), UTF_8)).isEqualTo("{\"code\":503,\"message\":\"envd failed to start\"}");
    }

    /** Stands in for envd's handler: answers every request with a fixed status and "<text> <path>". */
    private static final class Answering extends Handler.Abstract {
        private final int status;
        private final String text;

        Answering(int status, String text) {
            super(InvocationType.BLOCKING);
            this.status = status;
            this.text = text;
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception {
            Responses.bytes(response, status, "text/plain", (text + " " + request.getHttpURI().getPath()).getBytes(UTF_8));
            callback.succeeded();
            return true;
        }
    }
}
