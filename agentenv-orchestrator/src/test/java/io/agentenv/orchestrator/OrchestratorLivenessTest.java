package io.agentenv.orchestrator;

import static io.agentenv.orchestrator.OrchestratorHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.mock.FakeEnvd;
import io.agentenv.backend.mock.Gate;
import io.agentenv.backend.mock.MockAction;
import io.agentenv.backend.mock.MockOp;
import io.agentenv.backend.mock.MockSandbox;
import io.agentenv.spi.EnvdMetrics;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A sandbox whose instance dies on its own (the container's init exited, it was killed from outside) is noticed by the
 * liveness check and removed like a kill: while running, while a pause holds the instance, while a guest call is in
 * flight. The harness's scheduler ticks hourly, so each test runs the check itself.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
@ExtendWith(OrchestratorExtension.class)
class OrchestratorLivenessTest {
    OrchestratorHarness h;
    Orchestrator orchestrator;
    SandboxGuests guests;
    final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

    @BeforeEach
    void setUp(OrchestratorHarness harness) {
        h = harness;
        orchestrator = h.orchestrator;
        guests = new SandboxGuests(orchestrator, GuestSettings.defaults(), h.clock);
    }

    @AfterEach
    void tearDown() {
        threads.shutdownNow();
        guests.close();
    }

    private MockSandbox live(SandboxId id) {
        return h.backend.instance(id).orElseThrow();
    }

    private LivenessCheck.Round check() {
        return orchestrator.checkLiveness().orElseThrow();
    }

    private void assertRemovedLikeAKill(SandboxId id) throws InterruptedException {
        assertThatThrownBy(() -> orchestrator.get(id))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.NOT_FOUND));
        assertThat(h.store.get(id)).isEmpty();
        assertThat(live(id).status()).isEqualTo(MockSandbox.Status.CLOSED);
        h.events.await(e -> e instanceof LifecycleEvent.Killed k && k.sandbox().equals(id), WAIT);
        assertThat(orchestrator.list(SandboxQuery.all(100)).items())
                .extracting(SandboxView::id)
                .doesNotContain(id);
    }

    @Test
    void a_running_sandbox_whose_instance_died_is_removed_like_a_kill_then_not_found() throws Exception {
        // given
        SandboxId id = h.create();
        SandboxId other = h.create();
        // when
        live(id).die("the container's init exited");
        LivenessCheck.Round round = check();
        // then
        assertThat(round.of(id)).isEqualTo(LivenessCheck.Outcome.REMOVED);
        assertThat(round.of(other)).isEqualTo(LivenessCheck.Outcome.ALIVE);
        assertRemovedLikeAKill(id);
        assertThat(h.state(other)).isEqualTo(SandboxState.RUNNING);
    }

    @Test
    void live_sandboxes_stay_and_a_paused_one_is_not_asked() {
        SandboxId running = h.create();
        SandboxId paused = h.create();
        orchestrator.pause(paused, PauseMode.WITH_MEMORY);

        LivenessCheck.Round round = check();

        assertThat(round.outcomes()).containsOnlyKeys(running).containsEntry(running, LivenessCheck.Outcome.ALIVE);
        assertThat(h.backend.count(MockOp.LIVENESS)).isEqualTo(1);
        assertThat(h.state(paused)).isEqualTo(SandboxState.PAUSED);
    }

    @Test
    void a_death_during_a_pause_is_left_to_the_pause_which_fails_and_removes_the_sandbox() throws Exception {
        // given: a pause holds the instance when it dies
        SandboxId id = h.create();
        Gate gate = h.backend.holdNext(MockOp.PAUSE);
        Future<PauseOutcome> pause = threads.submit(() -> orchestrator.pause(id, PauseMode.WITH_MEMORY));
        gate.awaitEntered(WAIT);
        live(id).die("OOM-killed as a whole");
        // when
        LivenessCheck.Round during = check();
        gate.release();
        // then: the check neither waited for nor raced the pause; the pause met the dead instance
        assertThat(during.of(id)).isEqualTo(LivenessCheck.Outcome.NOT_RUNNING);
        assertThat(h.backend.count(MockOp.LIVENESS)).isZero();
        assertThatThrownBy(() -> pause.get(WAIT.toSeconds(), TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.INTERNAL));
        assertRemovedLikeAKill(id);
    }

    @Test
    void a_death_in_a_recoverably_failed_pause_leaves_it_running_until_the_next_check() throws Exception {
        // given
        SandboxId id = h.create();
        Gate gate = h.backend.holdNext(MockOp.PAUSE, MockAction.recoverable("checkpoint failed: no process to dump"));
        Future<PauseOutcome> pause = threads.submit(() -> orchestrator.pause(id, PauseMode.WITH_MEMORY));
        gate.awaitEntered(WAIT);
        live(id).die("killed from the host");
        gate.release();
        assertThatThrownBy(() -> pause.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
        assertThat(h.state(id)).isEqualTo(SandboxState.RUNNING);
        // when
        LivenessCheck.Round round = check();
        // then
        assertThat(round.of(id)).isEqualTo(LivenessCheck.Outcome.REMOVED);
        assertRemovedLikeAKill(id);
    }

    @Test
    void a_death_while_a_guest_call_is_in_flight_is_removed_without_waiting_for_the_call() throws Exception {
        // given: a metrics call is inside envd when the instance dies
        SandboxId id = h.create();
        RunningEnvd guest = guests.runningEnvd(id);
        Gate inEnvd = live(id).fakeEnvd().holdNext(FakeEnvd.Call.METRICS);
        Future<EnvdMetrics> call = threads.submit(() -> guest.envd().metrics());
        inEnvd.awaitEntered(WAIT);
        live(id).die("the container's init exited");
        // when
        LivenessCheck.Round round = check();
        // then
        assertThat(round.of(id)).isEqualTo(LivenessCheck.Outcome.REMOVED);
        assertRemovedLikeAKill(id);
        assertThatThrownBy(() -> guests.runningEnvd(id))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.NOT_FOUND));
        inEnvd.release();
        call.get(WAIT.toSeconds(), TimeUnit.SECONDS); // the answer already in flight still arrives, to nobody's harm
    }

    @ParameterizedTest(name = "while {0}")
    @EnumSource(
            value = SandboxState.class,
            names = {"CREATING", "RESUMING", "PAUSING", "SNAPSHOTTING", "FORKING", "KILLING"})
    void a_dead_instance_is_left_to_the_operation_that_owns_a_transitional_state(SandboxState state) {
        // given: the test plays the operation that owns the state
        SandboxId id = h.create();
        assertThat(h.orchestrator.records().cas(id, SandboxState.RUNNING, state))
                .isTrue();
        live(id).die("gone during " + state);
        // when
        LivenessCheck.Round round = check();
        // then
        assertThat(round.of(id)).isEqualTo(LivenessCheck.Outcome.NOT_RUNNING);
        assertThat(h.state(id)).isEqualTo(state);
        assertThat(h.backend.count(MockOp.LIVENESS)).isZero();
        assertThat(h.orchestrator.records().cas(id, state, SandboxState.RUNNING))
                .isTrue();
        assertThat(check().of(id)).isEqualTo(LivenessCheck.Outcome.REMOVED); // once RUNNING again, it goes
    }

    @Test
    void a_round_over_many_running_sandboxes_reads_the_store_once_and_removes_the_dead(@TempDir Path other) {
        // given: 40 running sandboxes (and one paused) on a store that counts its reads; two instances die
        AtomicReference<FaultyStore> counting = new AtomicReference<>();
        OrchestratorHarness many = OrchestratorHarness.countingReads(other, counting);
        try {
            List<SandboxId> ids = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                ids.add(many.create());
            }
            many.orchestrator.pause(ids.getLast(), PauseMode.WITH_MEMORY);
            many.backend.instance(ids.get(3)).orElseThrow().die("the container's init exited");
            many.backend.instance(ids.get(17)).orElseThrow().die("OOM-killed as a whole");
            counting.get().resetReads();
            // when
            LivenessCheck.Round round = many.orchestrator.checkLiveness().orElseThrow();
            // then: one read of the RUNNING ids for the whole round, no record read for a sandbox that is alive
            assertThat(round.outcomes()).hasSize(39).doesNotContainKey(ids.getLast());
            assertThat(round.outcomes().entrySet())
                    .filteredOn(e -> e.getValue() == LivenessCheck.Outcome.REMOVED)
                    .extracting(Map.Entry::getKey)
                    .containsExactlyInAnyOrder(ids.get(3), ids.get(17));
            assertThat(round.outcomes().values())
                    .filteredOn(LivenessCheck.Outcome.ALIVE::equals)
                    .hasSize(37);
            assertThat(counting.get().idSetReads()).isEqualTo(1);
            // the removals read the two dead sandboxes' records (as a kill does); the 37 live ones were never read
            counting.get().resetReads();
            assertThat(many.orchestrator.checkLiveness().orElseThrow().outcomes())
                    .hasSize(37)
                    .allSatisfy((id, outcome) -> assertThat(outcome).isEqualTo(LivenessCheck.Outcome.ALIVE));
            assertThat(counting.get().recordReads()).isZero();
            assertThat(counting.get().idSetReads()).isEqualTo(1);
        } finally {
            many.close();
        }
    }

    @Test
    void rounds_without_live_instances_read_the_store_once_per_change(@TempDir Path other) {
        AtomicReference<FaultyStore> counting = new AtomicReference<>();
        OrchestratorHarness none = OrchestratorHarness.countingReads(other, counting);
        try {
            SandboxId paused = none.create();
            none.orchestrator.pause(paused, PauseMode.WITH_MEMORY);
            counting.get().resetReads();

            // the first round after a write reads which sandboxes are RUNNING (none without an instance here)
            assertThat(none.orchestrator.checkLiveness().orElseThrow().outcomes())
                    .isEmpty();
            assertThat(counting.get().idSetReads()).isEqualTo(1);
            counting.get().resetReads();

            // and the rounds after it, with nothing written since, read nothing
            assertThat(none.orchestrator.checkLiveness().orElseThrow().outcomes())
                    .isEmpty();
            assertThat(counting.get().idSetReads()).isZero();
            assertThat(counting.get().recordReads()).isZero();
        } finally {
            none.close();
        }
    }

    @Test
    void a_sandbox_killed_by_the_user_meanwhile_is_not_removed_twice() throws Exception {
        SandboxId id = h.create();
        live(id).die("gone");
        orchestrator.kill(id);
        h.events.await(LifecycleEvent.Killed.class::isInstance, OrchestratorHarness.WAIT); // delivered asynchronously

        LivenessCheck.Round round = check();

        assertThat(round.outcomes()).doesNotContainKey(id);
        // events are delivered in order: once a later sandbox's Created arrived, a second Killed would have too
        SandboxId later = h.create();
        h.events.await(
                e -> e instanceof LifecycleEvent.Created c && c.sandbox().equals(later), OrchestratorHarness.WAIT);
        assertThat(h.events.events())
                .filteredOn(LifecycleEvent.Killed.class::isInstance)
                .hasSize(1);
    }
}
