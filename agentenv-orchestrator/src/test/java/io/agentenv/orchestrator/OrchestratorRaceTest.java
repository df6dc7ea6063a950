package io.agentenv.orchestrator;

import static io.agentenv.orchestrator.OrchestratorHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.mock.Gate;
import io.agentenv.backend.mock.MockBackendFactory;
import io.agentenv.backend.mock.MockOp;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Races are made deterministic by holding the compare-and-set winner inside the backend at a gate. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class OrchestratorRaceTest {
    @TempDir
    Path dir;

    OrchestratorHarness h;
    final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

    @AfterEach
    void tearDown() {
        threads.shutdownNow();
        if (h != null) {
            h.close();
        }
    }

    private Orchestrator start() {
        h = new OrchestratorHarness(dir);
        return h.orchestrator;
    }

    @Test
    void concurrent_pauses_reach_the_backend_once_and_all_succeed() throws Exception {
        // given
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        Gate gate = h.backend.holdNext(MockOp.PAUSE);
        // when
        List<Future<PauseOutcome>> pauses = IntStream.range(0, 8)
                .mapToObj(i -> threads.submit(() -> orchestrator.pause(id, PauseMode.WITH_MEMORY)))
                .toList();
        gate.awaitEntered(WAIT);
        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSING);
        gate.release();
        List<PauseOutcome> outcomes = new ArrayList<>();
        for (Future<PauseOutcome> pause : pauses) {
            outcomes.add(pause.get(10, TimeUnit.SECONDS));
        }
        // then
        assertThat(outcomes)
                .containsOnlyOnce(PauseOutcome.PAUSED)
                .allMatch(
                        o -> o == PauseOutcome.PAUSED || o == PauseOutcome.JOINED || o == PauseOutcome.ALREADY_PAUSED);
        assertThat(h.backend.count(MockOp.PAUSE)).isEqualTo(1);
        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSED);
    }

    @Test
    void concurrent_connects_to_a_paused_sandbox_resume_it_once() throws Exception {
        // given
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        orchestrator.pause(id, PauseMode.WITH_MEMORY);
        Gate gate = h.backend.holdNext(MockOp.START);
        // when
        List<Future<ConnectResult>> connects = IntStream.range(0, 6)
                .mapToObj(i -> threads.submit(() -> orchestrator.connect(id, Duration.ofSeconds(60))))
                .toList();
        gate.awaitEntered(WAIT);
        assertThat(h.state(id)).isEqualTo(SandboxState.RESUMING);
        gate.release();
        List<ConnectResult> results = new ArrayList<>();
        for (Future<ConnectResult> connect : connects) {
            results.add(connect.get(10, TimeUnit.SECONDS));
        }
        // then
        assertThat(results).allSatisfy(r -> assertThat(r.view().state()).isEqualTo(SandboxState.RUNNING));
        assertThat(results).anyMatch(r -> r.outcome() == ConnectResult.Outcome.RESUMED);
        assertThat(h.backend.count(MockOp.START)).isEqualTo(2); // the create and one resume
        assertThat(h.backend.openInstances()).hasSize(1);
    }

    @Test
    void kill_waits_out_a_pause_in_progress_and_then_kills() throws Exception {
        // given
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        Gate gate = h.backend.holdNext(MockOp.PAUSE);
        Future<PauseOutcome> pause = threads.submit(() -> orchestrator.pause(id, PauseMode.WITH_MEMORY));
        gate.awaitEntered(WAIT);
        // when
        Future<?> kill = threads.submit(() -> orchestrator.kill(id));
        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSING);
        gate.release();
        // then
        assertThat(pause.get(10, TimeUnit.SECONDS)).isEqualTo(PauseOutcome.PAUSED);
        kill.get(10, TimeUnit.SECONDS);
        assertThat(h.store.get(id)).isEmpty();
        assertThat(h.backend.openInstances()).isEmpty();
        assertThat(dir.resolve("artifacts/sandboxes").resolve(id.value())).doesNotExist();
    }

    @Test
    void kill_during_create_waits_for_the_launch_and_then_kills() throws Exception {
        // given
        Orchestrator orchestrator = start();
        Gate gate = h.backend.holdNext(MockOp.START);
        Future<SandboxView> create =
                threads.submit(() -> orchestrator.create(CreateSandbox.of("base", Duration.ofSeconds(60))));
        gate.awaitEntered(WAIT);
        SandboxId id = h.store.all().getFirst().id();
        assertThat(orchestrator.get(id).state()).isEqualTo(SandboxState.CREATING);
        // when
        Future<?> kill = threads.submit(() -> orchestrator.kill(id));
        gate.release();
        // then
        assertThat(create.get(10, TimeUnit.SECONDS).state()).isEqualTo(SandboxState.RUNNING);
        kill.get(10, TimeUnit.SECONDS);
        assertThat(h.store.get(id)).isEmpty();
        assertThat(h.backend.openInstances()).isEmpty();
    }

    @Test
    void pause_and_snapshot_while_forking_are_conflicts_and_the_fork_completes() throws Exception {
        // given
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        Gate gate = h.backend.holdNext(MockOp.SNAPSHOT);
        Future<List<ForkResult>> fork = threads.submit(() -> orchestrator.fork(id, 2, Optional.empty()));
        gate.awaitEntered(WAIT);
        // when / then
        assertThat(orchestrator.get(id).state()).isEqualTo(SandboxState.FORKING);
        assertThatThrownBy(() -> orchestrator.pause(id, PauseMode.WITH_MEMORY))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.CONFLICT));
        assertThatThrownBy(() -> orchestrator.snapshot(id, Optional.empty()))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.CONFLICT));
        gate.release();
        assertThat(fork.get(10, TimeUnit.SECONDS)).hasSize(2).allMatch(ForkResult.Child.class::isInstance);
        assertThat(h.state(id)).isEqualTo(SandboxState.RUNNING);
    }

    @Test
    void connect_during_a_pause_waits_for_it_and_then_resumes() throws Exception {
        // given
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        Gate gate = h.backend.holdNext(MockOp.PAUSE);
        Future<PauseOutcome> pause = threads.submit(() -> orchestrator.pause(id, PauseMode.WITH_MEMORY));
        gate.awaitEntered(WAIT);
        // when
        Future<ConnectResult> connect = threads.submit(() -> orchestrator.connect(id, Duration.ofSeconds(30)));
        gate.release();
        // then
        assertThat(pause.get(10, TimeUnit.SECONDS)).isEqualTo(PauseOutcome.PAUSED);
        assertThat(connect.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(ConnectResult.Outcome.RESUMED);
        assertThat(h.state(id)).isEqualTo(SandboxState.RUNNING);
    }

    @Test
    void a_wait_for_another_transition_is_bounded_and_ends_in_a_conflict() throws Exception {
        // given
        h = new OrchestratorHarness(dir, new MockBackendFactory(), UnaryOperator.identity(), Duration.ofMillis(200));
        Orchestrator orchestrator = h.orchestrator;
        SandboxId id = h.create();
        Gate gate = h.backend.holdNext(MockOp.PAUSE);
        Future<PauseOutcome> pause = threads.submit(() -> orchestrator.pause(id, PauseMode.WITH_MEMORY));
        gate.awaitEntered(WAIT);
        // when / then
        assertThatThrownBy(() -> orchestrator.kill(id))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.CONFLICT));
        gate.release();
        assertThat(pause.get(10, TimeUnit.SECONDS)).isEqualTo(PauseOutcome.PAUSED);
    }

    @Test
    void a_caller_that_stops_waiting_does_not_leave_a_half_done_pause() throws Exception {
        // given
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        Gate gate = h.backend.holdNext(MockOp.PAUSE);
        CompletableFuture<Throwable> callerOutcome = new CompletableFuture<>();
        Thread caller = Thread.ofVirtual().start(() -> {
            try {
                orchestrator.pause(id, PauseMode.WITH_MEMORY);
                callerOutcome.complete(null);
            } catch (RuntimeException e) {
                callerOutcome.complete(e);
            }
        });
        gate.awaitEntered(WAIT);
        // when: the caller goes away (as an HTTP request whose client disconnected)
        caller.interrupt();
        Throwable seenByCaller = callerOutcome.get(10, TimeUnit.SECONDS);
        gate.release();
        // then
        assertThat(seenByCaller).isInstanceOf(AgentEnvException.class);
        h.events.await(e -> e instanceof LifecycleEvent.Paused p && p.sandbox().equals(id), WAIT);
        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSED);
        assertThat(h.backend.openInstances()).isEmpty();
    }

    @Test
    void a_kill_during_a_fork_waits_and_the_children_survive_their_source() throws Exception {
        // given
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        Gate gate = h.backend.holdNext(MockOp.SNAPSHOT);
        Future<List<ForkResult>> fork = threads.submit(() -> orchestrator.fork(id, 2, Optional.empty()));
        gate.awaitEntered(WAIT);
        // when
        Future<?> kill = threads.submit(() -> orchestrator.kill(id));
        gate.release();
        // then
        List<ForkResult> children = fork.get(10, TimeUnit.SECONDS);
        kill.get(10, TimeUnit.SECONDS);
        assertThat(h.store.get(id)).isEmpty();
        for (ForkResult child : children) {
            assertThat(orchestrator
                            .get(((ForkResult.Child) child).sandbox().id())
                            .state())
                    .isEqualTo(SandboxState.RUNNING);
        }
    }

    @Test
    void many_concurrent_creates_get_distinct_running_sandboxes() throws Exception {
        // given
        Orchestrator orchestrator = start();
        // when
        List<Future<SandboxView>> creates = IntStream.range(0, 20)
                .mapToObj(i ->
                        threads.submit(() -> orchestrator.create(CreateSandbox.of("base", Duration.ofSeconds(60)))))
                .toList();
        List<SandboxId> ids = new ArrayList<>();
        for (Future<SandboxView> create : creates) {
            ids.add(create.get(10, TimeUnit.SECONDS).id());
        }
        // then
        assertThat(ids).doesNotHaveDuplicates().hasSize(20);
        assertThat(orchestrator.list(SandboxQuery.all(100)).items()).hasSize(20);
    }

    @Test
    void a_kill_racing_a_kill_succeeds_once_and_the_other_sees_not_found() throws Exception {
        // given
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        Gate gate = h.backend.holdNext(MockOp.CLOSE);
        Future<?> first = threads.submit(() -> orchestrator.kill(id));
        gate.awaitEntered(WAIT);
        // when / then
        assertThatThrownBy(() -> orchestrator.kill(id))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.NOT_FOUND));
        gate.release();
        first.get(10, TimeUnit.SECONDS);
        assertThat(h.store.get(id)).isEmpty();
    }
}
