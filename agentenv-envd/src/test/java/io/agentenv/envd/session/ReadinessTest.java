package io.agentenv.envd.session;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.envd.testing.TestEnvd;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ReadinessTest {
    private final CompletableFuture<Void> nativeSetUp = new CompletableFuture<>();
    private final CompletableFuture<Void> warmUp = new CompletableFuture<>();
    private final Session session = new Session(Clock.systemUTC());
    private TestEnvd envd;

    @BeforeEach
    void start() throws Exception {
        envd = TestEnvd.start(session, Optional.empty(), (rpcs, routes) -> {
            new SessionEndpoints(session).register(routes);
            new Readiness(List.of(nativeSetUp, warmUp), session, Duration.ofMillis(50)).register(routes);
        });
    }

    @AfterEach
    void stop() throws Exception {
        envd.close();
    }

    @Test
    void health_answers_while_the_background_set_up_runs_but_ready_does_not() throws Exception {
        assertThat(envd.client().get("/health", Map.of()).statusCode()).isEqualTo(204);

        HttpResponse<byte[]> ready = envd.client().get("/ready", Map.of());

        assertThat(ready.statusCode()).isEqualTo(503);
        assertThat(new String(ready.body(), UTF_8))
                .isEqualTo("{\"code\":503,\"message\":\"envd is still setting up\"}");
    }

    @Test
    void ready_answers_204_once_every_set_up_finished() throws Exception {
        nativeSetUp.complete(null);
        assertThat(envd.client().get("/ready", Map.of()).statusCode())
                .as("one set-up still running")
                .isEqualTo(503);

        warmUp.complete(null);

        assertThat(envd.client().get("/ready", Map.of()).statusCode()).isEqualTo(204);
    }

    @Test
    void a_failed_set_up_counts_as_finished() throws Exception {
        nativeSetUp.complete(null);
        warmUp.completeExceptionally(new IllegalStateException("warm-up failed"));

        assertThat(envd.client().get("/ready", Map.of()).statusCode()).isEqualTo(204);
    }

    @Test
    void ready_needs_no_token_before_init_sets_one() throws Exception {
        nativeSetUp.complete(null);
        warmUp.complete(null);

        assertThat(envd.client().get("/ready", Map.of()).statusCode()).isEqualTo(204);
    }

    @Test
    void once_init_set_a_token_ready_needs_it_like_every_route_but_health() throws Exception {
        envd.client().post("/init", "{\"accessToken\":\"s3cret\"}", Map.of());
        nativeSetUp.complete(null);
        warmUp.complete(null);

        assertThat(envd.client().get("/ready", Map.of()).statusCode()).isEqualTo(401);
        assertThat(envd.client()
                        .get("/ready", Map.of("X-Access-Token", "wrong"))
                        .statusCode())
                .isEqualTo(401);
        assertThat(envd.client()
                        .get("/ready", Map.of("X-Access-Token", "s3cret"))
                        .statusCode())
                .isEqualTo(204);
        assertThat(envd.client().get("/health", Map.of()).statusCode()).isEqualTo(204);
    }

    @Test
    void while_the_warm_up_holds_its_token_ready_says_not_ready_yet_not_unauthorized() throws Exception {
        SessionState uninitialised = session.current();
        nativeSetUp.complete(null);
        envd.client().post("/init", "{\"accessToken\":\"warm-up-token\"}", Map.of()); // a warm-up claim

        HttpResponse<byte[]> ready = envd.client().get("/ready", Map.of());

        assertThat(ready.statusCode())
                .as("the host's poll, token-less, during the warm-up")
                .isEqualTo(503);
        assertThat(new String(ready.body(), UTF_8))
                .isEqualTo("{\"code\":503,\"message\":\"envd is still setting up\"}");
        session.restore(uninitialised); // the warm-up's end
        warmUp.complete(null);
        assertThat(envd.client().get("/ready", Map.of()).statusCode()).isEqualTo(204);
    }
}
