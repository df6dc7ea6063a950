package io.agentenv.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.mock.FakeEnvd;
import io.agentenv.backend.mock.Gate;
import io.agentenv.backend.mock.MockAction;
import io.agentenv.backend.mock.MockBackendFactory;
import io.agentenv.backend.mock.MockOp;
import io.agentenv.backend.mock.MockSandbox;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
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
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Staged launch rollback and recoverable versus terminal backend failures. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class OrchestratorFailureTest {
    @TempDir
    Path dir;

    OrchestratorHarness h;
    Orchestrator orchestrator;
    final AtomicReference<FaultyStore> faulty = new AtomicReference<>();

    @BeforeEach
    void setUp() {
        h = new OrchestratorHarness(
                dir,
                new MockBackendFactory(),
                store -> {
                    FaultyStore wrapped = new FaultyStore(store);
                    faulty.set(wrapped);
                    return wrapped;
                },
                Duration.ofSeconds(10));
        orchestrator = h.orchestrator;
    }

    @AfterEach
    void tearDown() {
        h.close();
    }

    private static void assertKind(Runnable call, ErrorKind kind) {
        assertThatThrownBy(call::run)
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(kind));
    }

    private void assertNothingLeftOfTheFailedLaunch() {
        assertThat(h.store.all()).isEmpty();
        assertThat(h.backend.openInstances()).isEmpty();
        assertThat(orchestrator.list(SandboxQuery.all(100)).items()).isEmpty();
    }

    @Test
    void without_hooks_a_create_fsyncs_once_the_creating_and_running_records_together() {
        // when
        SandboxView view = orchestrator.create(CreateSandbox.of("base", Duration.ofSeconds(60)));
        // then
        assertThat(faulty.get().insertDurabilities()).containsExactly(SandboxStore.Durability.WITH_NEXT_WRITE);
        assertThat(view.state()).isEqualTo(SandboxState.RUNNING);
        h.restart(); // as a crash right after the answer
        assertThat(h.store.get(view.id()).orElseThrow().state()).isEqualTo(SandboxState.RUNNING);
    }

    @Test
    void with_hooks_the_creating_record_is_on_disk_before_the_start_hook_is_sent() {
        // given: an extension that records whether the record was there when its start hook came
        h.close();
        AtomicReference<Optional<SandboxState>> seenAtHook = new AtomicReference<>();
        AtomicReference<SandboxStore> store = new AtomicReference<>();
        LifecycleHooks hooks = new LifecycleHooks() {
            @Override
            public boolean enabled() {
                return true;
            }

            @Override
            public Optional<String> startFresh(HookStart start) {
                seenAtHook.set(store.get().get(start.sandboxId()).map(SandboxRecord::state));
                return Optional.empty();
            }

            @Override
            public void startResume(HookStart start) {}

            @Override
            public String patchParams(SandboxId sandboxId, String patch) {
                return patch;
            }

            @Override
            public void stop(SandboxId sandboxId, java.util.UUID instanceId) {}
        };
        h = new OrchestratorHarness(
                dir.resolve("hooks"),
                new MockBackendFactory(),
                s -> {
                    FaultyStore wrapped = new FaultyStore(s);
                    faulty.set(wrapped);
                    store.set(wrapped);
                    return wrapped;
                },
                Duration.ofSeconds(10),
                hooks);
        // when
        h.orchestrator.create(CreateSandbox.of("base", Duration.ofSeconds(60)));
        // then
        assertThat(faulty.get().insertDurabilities()).containsExactly(SandboxStore.Durability.NOW);
        assertThat(seenAtHook.get()).contains(SandboxState.CREATING);
    }

    enum LaunchStage {
        PREPARE,
        START_RECOVERABLE,
        START_TERMINAL,
        PERSIST_CREATING,
        PERSIST_RUNNING
    }

    @ParameterizedTest
    @EnumSource(LaunchStage.class)
    void a_launch_that_fails_at_any_stage_is_rolled_back_completely(LaunchStage stage) {
        // given
        switch (stage) {
            case PREPARE -> h.backend.script(MockOp.PREPARE, MockAction.terminal("no capacity"));
            case START_RECOVERABLE -> h.backend.script(MockOp.START, MockAction.recoverable("envd not ready"));
            case START_TERMINAL -> h.backend.script(MockOp.START, MockAction.terminal("container died"));
            case PERSIST_CREATING -> faulty.get().failNext(FaultyStore.Write.INSERT);
            case PERSIST_RUNNING -> faulty.get().failNext(FaultyStore.Write.REPLACE);
        }
        // when / then
        assertKind(() -> orchestrator.create(CreateSandbox.of("base", Duration.ofSeconds(60))), ErrorKind.INTERNAL);
        assertNothingLeftOfTheFailedLaunch();
        if (stage != LaunchStage.PREPARE) {
            assertThat(h.backend.count(MockOp.CLOSE)).isEqualTo(1);
        }
        // and the next create works
        assertThat(orchestrator
                        .create(CreateSandbox.of("base", Duration.ofSeconds(60)))
                        .state())
                .isEqualTo(SandboxState.RUNNING);
    }

    @Test
    void a_running_record_a_failed_launch_left_is_removed_by_the_liveness_check() throws Exception {
        // given a create whose RUNNING write was made although the store answered with a failure
        faulty.get().failNextAfterApplying(FaultyStore.Write.REPLACE);
        assertKind(() -> orchestrator.create(CreateSandbox.of("base", Duration.ofSeconds(60))), ErrorKind.INTERNAL);
        assertThat(h.backend.openInstances()).isEmpty();
        SandboxRecord left = h.store.all().getFirst();
        assertThat(left.state()).isEqualTo(SandboxState.RUNNING);

        // when
        LivenessCheck.Round round = orchestrator.checkLiveness().orElseThrow();

        // then it is gone like a killed sandbox
        assertThat(round.of(left.id())).isEqualTo(LivenessCheck.Outcome.REMOVED);
        assertNothingLeftOfTheFailedLaunch();
        h.events.await(
                e -> e instanceof LifecycleEvent.Killed k && k.sandbox().equals(left.id()), OrchestratorHarness.WAIT);
        assertThat(orchestrator.checkLiveness().orElseThrow().outcomes()).isEmpty();
    }

    @Test
    void a_create_whose_guest_agent_never_gets_healthy_is_an_upstream_failure_rolled_back() throws Exception {
        Gate starting = h.backend.holdNext(MockOp.START);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<SandboxView> create =
                    threads.submit(() -> orchestrator.create(CreateSandbox.of("base", Duration.ofSeconds(60))));
            starting.awaitEntered(OrchestratorHarness.WAIT);
            h.backend
                    .instances()
                    .getLast()
                    .fakeEnvd()
                    .failNext(FakeEnvd.Call.HEALTH, new EnvdException.Unreachable("not healthy after 60 probes"));
            starting.release();

            assertThatThrownBy(() -> create.get(10, TimeUnit.SECONDS))
                    .cause()
                    .isInstanceOfSatisfying(AgentEnvException.class, e -> {
                        assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_FAILED);
                        assertThat(e.getMessage())
                                .endsWith(
                                        "could not be started: its guest agent (envd) did not become ready within 5 s")
                                .doesNotContain("probes");
                    });
        }
        assertNothingLeftOfTheFailedLaunch();
        assertThat(h.backend.count(MockOp.CLOSE)).isEqualTo(1);
        assertThat(orchestrator
                        .create(CreateSandbox.of("base", Duration.ofSeconds(60)))
                        .state())
                .isEqualTo(SandboxState.RUNNING);
    }

    @Test
    void a_create_whose_guest_agent_refuses_init_is_an_upstream_failure_and_rolled_back() {
        // as the container backend reports it: Terminal, with envd's error as the cause
        h.backend.script(
                MockOp.START,
                MockAction.fail(new BackendException.Terminal(
                        "sandbox did not start: /init 500", new EnvdException.Rejected(500, "bad token"))));
        assertThatThrownBy(() -> orchestrator.create(CreateSandbox.of("base", Duration.ofSeconds(60))))
                .isInstanceOfSatisfying(AgentEnvException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_FAILED);
                    assertThat(e.getMessage()).endsWith("its guest agent (envd) refused to initialise");
                });
        assertNothingLeftOfTheFailedLaunch();
    }

    enum ResumeStage {
        DECODE,
        PREPARE,
        START,
        PERSIST_RUNNING
    }

    @ParameterizedTest
    @EnumSource(ResumeStage.class)
    void a_resume_that_fails_at_any_stage_leaves_the_sandbox_paused_with_its_state(ResumeStage stage) {
        // given
        SandboxId id = h.create();
        orchestrator.pause(id, PauseMode.WITH_MEMORY);
        StoredState paused = h.store.get(id).orElseThrow().paused().orElseThrow();
        switch (stage) {
            case DECODE -> h.backend.script(MockOp.DECODE_PAUSED, MockAction.terminal("corrupt"));
            case PREPARE -> h.backend.script(MockOp.PREPARE, MockAction.recoverable("no slot"));
            case START -> h.backend.script(MockOp.START, MockAction.terminal("restore crashed"));
            case PERSIST_RUNNING -> faulty.get().failNext(FaultyStore.Write.REPLACE);
        }
        // when
        assertKind(() -> orchestrator.connect(id, Duration.ofSeconds(10)), ErrorKind.INTERNAL);
        // then
        assertThat(h.state(id)).isEqualTo(SandboxState.PAUSED);
        assertThat(h.store.get(id).orElseThrow().paused()).contains(paused);
        assertThat(paused.artifactDir()).isNotEmptyDirectory();
        assertThat(h.backend.openInstances()).isEmpty();
        assertThat(orchestrator.connect(id, Duration.ofSeconds(10)).outcome()).isEqualTo(ConnectResult.Outcome.RESUMED);
    }

    @Test
    void a_recoverable_pause_failure_leaves_the_sandbox_running_and_retryable() {
        // given
        SandboxId id = h.create();
        h.backend.script(MockOp.PAUSE, MockAction.recoverable("criu dump failed"));
        // when
        assertKind(() -> orchestrator.pause(id, PauseMode.WITH_MEMORY), ErrorKind.INTERNAL);
        // then
        assertThat(orchestrator.get(id).state()).isEqualTo(SandboxState.RUNNING);
        assertThat(dir.resolve("artifacts/sandboxes").resolve(id.value())).isEmptyDirectory();
        assertThat(orchestrator.pause(id, PauseMode.WITH_MEMORY)).isEqualTo(PauseOutcome.PAUSED);
    }

    @Test
    void a_terminal_pause_failure_removes_the_sandbox_and_releases_everything() {
        // given
        SandboxId id = h.create();
        h.backend.script(MockOp.PAUSE, MockAction.terminal("criu crashed"));
        // when
        assertKind(() -> orchestrator.pause(id, PauseMode.WITH_MEMORY), ErrorKind.INTERNAL);
        // then
        assertKind(() -> orchestrator.get(id), ErrorKind.NOT_FOUND);
        assertThat(h.backend.openInstances()).isEmpty();
        assertThat(dir.resolve("artifacts/sandboxes").resolve(id.value())).doesNotExist();
    }

    @Test
    void a_pause_whose_result_cannot_be_persisted_does_not_leave_a_zombie() {
        // given
        SandboxId id = h.create();
        faulty.get().failNext(FaultyStore.Write.REPLACE);
        // when
        assertKind(() -> orchestrator.pause(id, PauseMode.WITH_MEMORY), ErrorKind.INTERNAL);
        // then
        assertThat(h.store.get(id)).isEmpty();
        assertThat(h.backend.openInstances()).isEmpty();
    }

    @Test
    void a_failed_resume_keeps_the_sandbox_paused_and_resumable() {
        // given
        SandboxId id = h.create();
        orchestrator.pause(id, PauseMode.WITH_MEMORY);
        h.backend.script(MockOp.START, MockAction.recoverable("restore failed"));
        // when
        assertKind(() -> orchestrator.connect(id, Duration.ofSeconds(10)), ErrorKind.INTERNAL);
        // then
        assertThat(orchestrator.get(id).state()).isEqualTo(SandboxState.PAUSED);
        assertThat(h.store.get(id).orElseThrow().paused()).isPresent();
        assertThat(h.backend.openInstances()).isEmpty();
        assertThat(orchestrator.connect(id, Duration.ofSeconds(10)).outcome()).isEqualTo(ConnectResult.Outcome.RESUMED);
    }

    @Test
    void a_resume_whose_guest_agent_never_gets_healthy_is_upstream_failed_stays_paused() {
        // given: the backend reports it as the container backend does (Terminal, envd's error as the cause)
        SandboxId id = h.create();
        orchestrator.pause(id, PauseMode.WITH_MEMORY);
        h.backend.script(
                MockOp.START,
                MockAction.fail(new BackendException.Terminal(
                        "sandbox did not start (FromPaused)",
                        new EnvdException.Unreachable("not healthy after 60 probes"))));
        // when
        assertThatThrownBy(() -> orchestrator.connect(id, Duration.ofSeconds(10)))
                .isInstanceOfSatisfying(AgentEnvException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_FAILED);
                    assertThat(e.getMessage())
                            .endsWith("failed: its guest agent (envd) did not become ready within 5 s; it stays paused")
                            .doesNotContain("probes");
                });
        // then
        assertThat(orchestrator.get(id).state()).isEqualTo(SandboxState.PAUSED);
        assertThat(h.store.get(id).orElseThrow().paused()).isPresent();
        assertThat(h.backend.openInstances()).isEmpty();
        assertThat(orchestrator.connect(id, Duration.ofSeconds(10)).outcome()).isEqualTo(ConnectResult.Outcome.RESUMED);
    }

    @Test
    void a_recoverable_snapshot_failure_leaves_the_sandbox_running_and_catalog_unchanged() {
        // given
        SandboxId id = h.create();
        h.backend.script(MockOp.SNAPSHOT, MockAction.recoverable("disk full"));
        // when
        assertKind(() -> orchestrator.snapshot(id, Optional.of("s")), ErrorKind.INTERNAL);
        // then
        assertThat(orchestrator.get(id).state()).isEqualTo(SandboxState.RUNNING);
        assertThat(orchestrator
                        .listSnapshots(new SnapshotQuery(Optional.empty(), Optional.empty(), 10, Optional.empty()))
                        .items())
                .isEmpty();
        assertThat(dir.resolve("artifacts/snapshots")).isEmptyDirectory();
    }

    @Test
    void a_terminal_snapshot_failure_removes_the_sandbox() {
        SandboxId id = h.create();
        h.backend.script(MockOp.SNAPSHOT, MockAction.terminal("frozen forever"));
        assertKind(() -> orchestrator.snapshot(id, Optional.empty()), ErrorKind.INTERNAL);
        assertKind(() -> orchestrator.get(id), ErrorKind.NOT_FOUND);
        assertThat(h.backend.openInstances()).isEmpty();
    }

    @Test
    void a_snapshot_that_cannot_be_recorded_leaves_the_sandbox_running_and_no_artifacts() {
        SandboxId id = h.create();
        faulty.get().failNext(FaultyStore.Write.INSERT_SNAPSHOT);
        assertKind(() -> orchestrator.snapshot(id, Optional.empty()), ErrorKind.INTERNAL);
        assertThat(orchestrator.get(id).state()).isEqualTo(SandboxState.RUNNING);
        assertThat(dir.resolve("artifacts/snapshots")).isEmptyDirectory();
    }

    @Test
    void a_recoverable_fork_capture_failure_puts_the_source_back_to_running_no_children() {
        SandboxId id = h.create();
        h.backend.script(MockOp.SNAPSHOT, MockAction.recoverable("busy"));
        assertKind(() -> orchestrator.fork(id, 2, Optional.empty()), ErrorKind.INTERNAL);
        assertThat(orchestrator.get(id).state()).isEqualTo(SandboxState.RUNNING);
        assertThat(h.backend.count(MockOp.PREPARE)).isEqualTo(1);
    }

    @Test
    void a_terminal_fork_capture_failure_removes_the_source() {
        SandboxId id = h.create();
        h.backend.script(MockOp.SNAPSHOT, MockAction.terminal("gone"));
        assertKind(() -> orchestrator.fork(id, 2, Optional.empty()), ErrorKind.INTERNAL);
        assertKind(() -> orchestrator.get(id), ErrorKind.NOT_FOUND);
        assertThat(h.backend.openInstances()).isEmpty();
    }

    @Test
    void one_failing_fork_child_is_reported_in_its_slot_and_the_others_start() {
        // given
        SandboxId id = h.create();
        h.backend.script(MockOp.START, MockAction.succeed(), MockAction.recoverable("child boot failed"));
        // when
        List<ForkResult> results = orchestrator.fork(id, 3, Optional.of(Duration.ofSeconds(5)));
        // then
        assertThat(results).hasSize(3);
        assertThat(results)
                .filteredOn(ForkResult.Failed.class::isInstance)
                .hasSize(1)
                .allSatisfy(r -> assertThat(((ForkResult.Failed) r).kind()).isEqualTo(ErrorKind.INTERNAL));
        assertThat(results).filteredOn(ForkResult.Child.class::isInstance).hasSize(2);
        assertThat(h.store.all()).hasSize(3); // source and two children
        assertThat(h.backend.openInstances()).hasSize(3);
    }

    @Test
    void a_kill_whose_stop_fails_restores_the_previous_state() {
        // given
        SandboxId id = h.create();
        h.backend.script(MockOp.CLOSE, MockAction.recoverable("device busy"));
        // when
        assertKind(() -> orchestrator.kill(id), ErrorKind.INTERNAL);
        // then
        assertThat(orchestrator.get(id).state()).isEqualTo(SandboxState.RUNNING);
        orchestrator.kill(id);
        assertKind(() -> orchestrator.get(id), ErrorKind.NOT_FOUND);
    }

    @Test
    void killing_a_paused_sandbox_lets_the_backend_release_what_its_pause_still_held() {
        SandboxId id = h.create();
        orchestrator.pause(id, PauseMode.WITH_MEMORY);

        orchestrator.kill(id);

        assertThat(h.backend.count(MockOp.DISCARD_PAUSED)).isEqualTo(1);
        assertKind(() -> orchestrator.get(id), ErrorKind.NOT_FOUND);
    }

    @Test
    void killing_a_paused_sandbox_whose_release_fails_keeps_it_paused_and_a_retry_works() {
        // given
        SandboxId id = h.create();
        orchestrator.pause(id, PauseMode.WITH_MEMORY);
        h.backend.script(MockOp.DISCARD_PAUSED, MockAction.recoverable("loop device busy"));
        // when
        assertKind(() -> orchestrator.kill(id), ErrorKind.INTERNAL);
        // then
        assertThat(orchestrator.get(id).state()).isEqualTo(SandboxState.PAUSED);
        orchestrator.kill(id);
        assertThat(h.backend.count(MockOp.DISCARD_PAUSED)).isEqualTo(2);
        assertKind(() -> orchestrator.get(id), ErrorKind.NOT_FOUND);
    }

    @Test
    void killing_a_running_sandbox_does_not_discard_a_paused_state() {
        SandboxId id = h.create();

        orchestrator.kill(id);

        assertThat(h.backend.count(MockOp.DISCARD_PAUSED)).isZero();
    }

    @Test
    void a_refused_network_update_keeps_the_old_policy() {
        // given
        SandboxId id = h.create();
        h.backend.script(MockOp.UPDATE_NETWORK, MockAction.recoverable("nft failed"));
        NetworkPolicy policy = new NetworkPolicy(
                NetworkPolicy.InternetAccess.DENIED, List.of(), List.of(), NetworkPolicy.PublicTraffic.ALLOWED);
        // when
        assertKind(() -> orchestrator.updateNetwork(id, policy), ErrorKind.INTERNAL);
        // then
        assertThat(orchestrator.get(id).network()).isEqualTo(NetworkPolicy.DEFAULT);
        assertThat(h.backend.instance(id).orElseThrow().network()).isEqualTo(NetworkPolicy.DEFAULT);
        assertThat(h.backend.instance(id).orElseThrow().status()).isEqualTo(MockSandbox.Status.RUNNING);
    }

    @Test
    void operations_on_sandboxes_that_never_existed_are_not_found() {
        SandboxId ghost = new SandboxId("abcdefghij0123456789");
        assertKind(() -> orchestrator.get(ghost), ErrorKind.NOT_FOUND);
        assertKind(() -> orchestrator.kill(ghost), ErrorKind.NOT_FOUND);
        assertKind(() -> orchestrator.pause(ghost, PauseMode.WITH_MEMORY), ErrorKind.NOT_FOUND);
        assertKind(() -> orchestrator.connect(ghost, Duration.ofSeconds(1)), ErrorKind.NOT_FOUND);
        assertKind(() -> orchestrator.resume(ghost, Duration.ofSeconds(1)), ErrorKind.NOT_FOUND);
        assertKind(() -> orchestrator.setTimeout(ghost, Duration.ofSeconds(1)), ErrorKind.NOT_FOUND);
        assertKind(() -> orchestrator.refresh(ghost, Duration.ofSeconds(1)), ErrorKind.NOT_FOUND);
        assertKind(() -> orchestrator.fork(ghost, 1, Optional.empty()), ErrorKind.NOT_FOUND);
        assertKind(() -> orchestrator.snapshot(ghost, Optional.empty()), ErrorKind.NOT_FOUND);
        assertKind(() -> orchestrator.updateNetwork(ghost, NetworkPolicy.DEFAULT), ErrorKind.NOT_FOUND);
        assertKind(() -> orchestrator.customExtensionParams(ghost), ErrorKind.NOT_FOUND);
    }
}
