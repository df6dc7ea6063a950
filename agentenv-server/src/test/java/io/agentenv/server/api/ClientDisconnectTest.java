package io.agentenv.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.mock.Gate;
import io.agentenv.backend.mock.MockOp;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.spi.SandboxId;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Operations started over HTTP finish (or roll back) even when the client goes away, and concurrent calls agree. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ClientDisconnectTest {
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

    /** Waits for a condition with a deadline (no fixed sleeps). */
    private static void await(BooleanSupplier condition, Duration timeout) {
        Instant deadline = Instant.now().plus(timeout);
        while (!condition.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("condition not met within " + timeout);
            }
            LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
        }
    }

    @Test
    void a_pause_whose_client_disconnects_still_completes() throws Exception {
        // given a pause held inside the backend
        SandboxId id = new SandboxId(server.create());
        Gate gate = server.backend.holdNext(MockOp.PAUSE);
        CompletableFuture<HttpResponse<String>> call = server.http.sendAsync(
                server.request("/sandboxes/" + id.value() + "/pause")
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        gate.awaitEntered(Duration.ofSeconds(10));
        // when the client goes away and the backend then finishes
        call.cancel(true);
        gate.release();
        // then the pause completes instead of being left half-done
        await(() -> server.orchestrator.get(id).state() == SandboxState.PAUSED, Duration.ofSeconds(10));
        assertThat(server.backend.count(MockOp.PAUSE)).isEqualTo(1);
    }

    @Test
    void concurrent_pauses_over_http_reach_the_backend_once_and_each_gets_204_or_409() throws Exception {
        SandboxId id = new SandboxId(server.create());
        Gate gate = server.backend.holdNext(MockOp.PAUSE);
        List<CompletableFuture<HttpResponse<String>>> calls = new java.util.ArrayList<>();
        for (int i = 0; i < 6; i++) {
            calls.add(server.http.sendAsync(
                    server.request("/sandboxes/" + id.value() + "/pause")
                            .POST(HttpRequest.BodyPublishers.ofString("{}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString()));
        }
        gate.awaitEntered(Duration.ofSeconds(10));
        gate.release();
        for (CompletableFuture<HttpResponse<String>> call : calls) {
            // a joined pause is 204; a call that arrived after it finished sees "already paused" (409)
            assertThat(call.get().statusCode()).isIn(204, 409);
        }
        assertThat(calls.stream().filter(c -> c.join().statusCode() == 204)).isNotEmpty();
        assertThat(server.backend.count(MockOp.PAUSE)).isEqualTo(1);
        assertThat(server.orchestrator.get(id).state()).isEqualTo(SandboxState.PAUSED);
    }
}
