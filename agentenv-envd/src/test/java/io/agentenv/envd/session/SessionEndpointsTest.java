package io.agentenv.envd.session;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.envd.testing.TestEnvd;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SessionEndpointsTest {

    private final AtomicInteger afterInit = new AtomicInteger();
    private TestEnvd envd;

    @BeforeEach
    void start() throws Exception {
        Session session = new Session(Clock.systemUTC());
        envd = TestEnvd.start(
                session,
                Optional.empty(),
                (rpcs, routes) -> new SessionEndpoints(session, afterInit::incrementAndGet).register(routes));
    }

    @AfterEach
    void stop() throws Exception {
        envd.close();
    }

    @Test
    void the_after_init_step_runs_once_per_accepted_init_before_it_is_answered() throws Exception {
        assertThat(envd.client().post("/init", "{}", Map.of()).statusCode()).isEqualTo(204);
        assertThat(afterInit).hasValue(1);

        assertThat(envd.client()
                        .post("/init", "{\"accessToken\":\"s3cret\"}", Map.of())
                        .statusCode())
                .isEqualTo(204);
        assertThat(afterInit).hasValue(2);
    }

    @Test
    void a_refused_or_malformed_init_does_not_run_it() throws Exception {
        envd.client().post("/init", "{\"accessToken\":\"s3cret\"}", Map.of());

        assertThat(envd.client()
                        .post("/init", "{\"accessToken\":\"other\"}", Map.of())
                        .statusCode())
                .isEqualTo(401);
        assertThat(envd.client()
                        .post("/init", "{\"defaultWorkdir\":\"relative\"}", Map.of("X-Access-Token", "s3cret"))
                        .statusCode())
                .isEqualTo(400);
        assertThat(afterInit).hasValue(1);
    }
}
