package io.agentenv.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.mock.MockAction;
import io.agentenv.backend.mock.MockOp;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** A backend at capacity ({@link BackendException.Exhausted}) is RESOURCE_EXHAUSTED (429), and leaves nothing behind. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
@ExtendWith(OrchestratorExtension.class)
class OrchestratorCapacityTest {
    private static final String LIMIT = "all 2 sandbox slots of this server are in use (AENV_BACKEND_MAX_SANDBOXES)";

    OrchestratorHarness h;
    Orchestrator orchestrator;

    @BeforeEach
    void setUp(OrchestratorHarness harness) {
        h = harness;
        orchestrator = h.orchestrator;
    }

    private static MockAction atCapacity() {
        return MockAction.fail(new BackendException.Exhausted(LIMIT, "no free network slot: all 2 are in use", null));
    }

    private static void assertExhausted(Runnable call) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(AgentEnvException.class, e -> {
            assertThat(e.kind()).isEqualTo(ErrorKind.RESOURCE_EXHAUSTED);
            assertThat(e.getMessage())
                    .isEqualTo("too many sandboxes: " + LIMIT + "; kill or pause a sandbox, then retry");
        });
    }

    @Test
    void a_create_refused_by_a_full_backend_is_resource_exhausted_and_leaves_nothing() {
        h.backend.script(MockOp.PREPARE, atCapacity());

        assertExhausted(() -> h.create());

        assertThat(h.store.all()).isEmpty();
        assertThat(h.backend.openInstances()).isEmpty();
        assertThat(h.events.events()).isEmpty();
    }

    @Test
    void a_create_whose_start_meets_the_limit_is_rolled_back_and_resource_exhausted() {
        h.backend.script(MockOp.START, atCapacity());

        assertExhausted(() -> h.create());

        assertThat(h.store.all()).isEmpty();
        assertThat(h.backend.openInstances()).isEmpty();
    }

    @Test
    void a_fork_with_more_children_than_free_slots_has_the_extra_resource_exhausted() {
        // given: one free slot left for three children (the children prepare concurrently, in any order)
        SandboxId source = h.create();
        h.backend.script(MockOp.PREPARE, MockAction.succeed(), atCapacity(), atCapacity());
        // when
        List<ForkResult> results = orchestrator.fork(source, 3, Optional.empty());
        // then
        assertThat(results).filteredOn(ForkResult.Child.class::isInstance).hasSize(1);
        assertThat(results)
                .filteredOn(ForkResult.Failed.class::isInstance)
                .hasSize(2)
                .allSatisfy(r -> {
                    ForkResult.Failed failed = (ForkResult.Failed) r;
                    assertThat(failed.kind()).isEqualTo(ErrorKind.RESOURCE_EXHAUSTED);
                    assertThat(failed.message()).contains(LIMIT);
                });
        assertThat(h.store.all()).hasSize(2);
        assertThat(h.state(source)).isEqualTo(SandboxState.RUNNING);
        assertThat(h.backend.openInstances()).hasSize(2);
        assertThat(h.artifactRoot().resolve("forks")).isEmptyDirectory();
    }

    @Test
    void a_resume_refused_by_a_full_backend_is_resource_exhausted_and_stays_resumable() {
        SandboxId id = h.create();
        orchestrator.pause(id, PauseMode.WITH_MEMORY);
        h.backend.script(MockOp.PREPARE, atCapacity());

        assertExhausted(() -> orchestrator.connect(id, Duration.ofSeconds(60)));

        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSED);
        assertThat(orchestrator.connect(id, Duration.ofSeconds(60)).outcome()).isEqualTo(ConnectResult.Outcome.RESUMED);
    }
}
