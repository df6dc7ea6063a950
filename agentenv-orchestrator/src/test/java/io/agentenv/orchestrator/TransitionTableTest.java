package io.agentenv.orchestrator;

import static io.agentenv.orchestrator.SandboxState.KILLING;
import static io.agentenv.orchestrator.SandboxState.PAUSED;
import static io.agentenv.orchestrator.SandboxState.RUNNING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.mock.MockBackendFactory;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Optional;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every operation against a sandbox in every state: the state is forced with a direct store transition (the test
 * plays the operation that owns it), waits are bounded at 100 ms, and the outcome must match the table.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class TransitionTableTest {
    enum Op {
        GET,
        KILL,
        PAUSE,
        CONNECT,
        RESUME,
        SET_TIMEOUT,
        REFRESH,
        FORK,
        SNAPSHOT,
        UPDATE_NETWORK,
        PATCH_PARAMS
    }

    enum Outcome {
        OK,
        NOT_FOUND,
        CONFLICT
    }

    @TempDir
    Path dir;

    OrchestratorHarness h;

    @AfterEach
    void tearDown() {
        if (h != null) {
            h.close();
        }
    }

    static Outcome expected(SandboxState state, Op op) {
        if (state == KILLING) {
            return Outcome.NOT_FOUND;
        }
        return switch (op) {
            case GET -> Outcome.OK;
            case KILL, PAUSE, CONNECT, RESUME, SET_TIMEOUT, REFRESH ->
                state == RUNNING || state == PAUSED ? Outcome.OK : Outcome.CONFLICT;
            case FORK, SNAPSHOT, UPDATE_NETWORK, PATCH_PARAMS -> state == RUNNING ? Outcome.OK : Outcome.CONFLICT;
        };
    }

    static Stream<Arguments> table() {
        return Arrays.stream(SandboxState.values())
                .flatMap(state -> Arrays.stream(Op.values()).map(op -> Arguments.of(state, op, expected(state, op))));
    }

    @ParameterizedTest(name = "{1} while {0} -> {2}")
    @MethodSource("table")
    void every_operation_in_every_state_matches_the_transition_table(SandboxState state, Op op, Outcome expected) {
        // given
        h = new OrchestratorHarness(dir, new MockBackendFactory(), UnaryOperator.identity(), Duration.ofMillis(100));
        Orchestrator orchestrator = h.orchestrator;
        SandboxId id = h.create();
        if (state == PAUSED) {
            orchestrator.pause(id, PauseMode.WITH_MEMORY);
        } else if (state != RUNNING) {
            assertThat(h.store.transition(id, EnumSet.of(RUNNING), state)).isTrue();
        }
        Runnable call = switch (op) {
            case GET -> () -> orchestrator.get(id);
            case KILL -> () -> orchestrator.kill(id);
            case PAUSE -> () -> orchestrator.pause(id, PauseMode.WITH_MEMORY);
            case CONNECT -> () -> orchestrator.connect(id, Duration.ofSeconds(5));
            case RESUME -> () -> orchestrator.resume(id, Duration.ofSeconds(5));
            case SET_TIMEOUT -> () -> orchestrator.setTimeout(id, Duration.ofSeconds(5));
            case REFRESH -> () -> orchestrator.refresh(id, Duration.ofSeconds(5));
            case FORK -> () -> orchestrator.fork(id, 1, Optional.empty());
            case SNAPSHOT -> () -> orchestrator.snapshot(id, Optional.empty());
            case UPDATE_NETWORK -> () -> orchestrator.updateNetwork(id, NetworkPolicy.DEFAULT);
            case PATCH_PARAMS -> () -> orchestrator.patchCustomExtensionParams(id, "{}");
        };
        // when / then
        switch (expected) {
            case OK -> {
                call.run();
                if (state.isTransitional()) {
                    assertThat(h.state(id)).isEqualTo(state); // the owner's state was not stolen
                }
            }
            case NOT_FOUND, CONFLICT -> {
                ErrorKind kind = expected == Outcome.NOT_FOUND ? ErrorKind.NOT_FOUND : ErrorKind.CONFLICT;
                assertThatThrownBy(call::run)
                        .isInstanceOfSatisfying(
                                AgentEnvException.class,
                                e -> assertThat(e.kind()).isEqualTo(kind));
                assertThat(h.state(id)).isEqualTo(state); // a refused operation changes nothing
            }
        }
    }
}
