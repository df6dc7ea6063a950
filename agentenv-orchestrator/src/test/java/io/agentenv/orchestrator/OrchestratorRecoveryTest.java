package io.agentenv.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.mock.MockOp;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Restart recovery and graceful shutdown, on a real SQLite file that outlives the orchestrator. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
@ExtendWith(OrchestratorExtension.class)
class OrchestratorRecoveryTest {
    OrchestratorHarness h;

    @BeforeEach
    void setUp(OrchestratorHarness harness) {
        h = harness;
    }

    @Test
    void paused_sandboxes_are_listed_and_resumable_after_a_restart() {
        // given
        SandboxId id = h.create();
        h.orchestrator.pause(id, PauseMode.WITH_MEMORY);
        h.backend.loseAllInstances(); // even a host reboot keeps what is on disk
        // when
        h.restart();
        // then
        assertThat(h.orchestrator.list(SandboxQuery.all(100)).items())
                .extracting(SandboxView::id)
                .containsExactly(id);
        assertThat(h.orchestrator.connect(id, Duration.ofSeconds(30)).outcome())
                .isEqualTo(ConnectResult.Outcome.RESUMED);
    }

    @Test
    void a_running_sandbox_that_survived_the_restart_is_reattached() {
        // given
        SandboxId id = h.create();
        // when
        h.restart();
        // then
        assertThat(h.orchestrator.get(id).state()).isEqualTo(SandboxState.RUNNING);
        assertThat(h.backend.count(MockOp.REATTACH)).isEqualTo(1);
        assertThat(h.orchestrator.pause(id, PauseMode.WITH_MEMORY)).isEqualTo(PauseOutcome.PAUSED);
    }

    @Test
    void a_running_sandbox_whose_runtime_vanished_is_removed_with_a_killed_event() throws Exception {
        // given
        SandboxId id = h.create();
        h.backend.loseAllInstances();
        // when
        h.restart();
        // then
        assertThat(h.store.get(id)).isEmpty();
        assertThatThrownBy(() -> h.orchestrator.get(id)).isInstanceOf(AgentEnvException.class);
        h.events.await(e -> e instanceof LifecycleEvent.Killed k && k.sandbox().equals(id), OrchestratorHarness.WAIT);
    }

    @Test
    void transitional_records_are_reconciled_explicitly() {
        // given: a crash left one sandbox in each interrupted transition
        SandboxId creating = h.create();
        SandboxId resuming = h.create();
        SandboxId pausingSurvivor = h.create();
        SandboxId killing = h.create();
        h.orchestrator.pause(resuming, PauseMode.WITH_MEMORY);
        h.store.transition(creating, EnumSet.of(SandboxState.RUNNING), SandboxState.CREATING);
        h.store.transition(resuming, EnumSet.of(SandboxState.PAUSED), SandboxState.RESUMING);
        h.store.transition(pausingSurvivor, EnumSet.of(SandboxState.RUNNING), SandboxState.PAUSING);
        h.store.transition(killing, EnumSet.of(SandboxState.RUNNING), SandboxState.KILLING);
        // when
        h.restart();
        // then
        assertThat(h.store.get(creating)).isEmpty();
        assertThat(h.store.get(killing)).isEmpty();
        assertThat(h.state(resuming)).isEqualTo(SandboxState.PAUSED);
        assertThat(h.state(pausingSurvivor)).isEqualTo(SandboxState.RUNNING);
        assertThat(h.backend.openInstances()).hasSize(1); // only the re-attached survivor
        assertThat(h.orchestrator.connect(resuming, Duration.ofSeconds(5)).outcome())
                .isEqualTo(ConnectResult.Outcome.RESUMED);
    }

    @Test
    void a_paused_sandbox_whose_artifacts_are_gone_is_removed_not_kept_as_a_zombie() throws Exception {
        // given
        SandboxId id = h.create();
        h.orchestrator.pause(id, PauseMode.WITH_MEMORY);
        Path artifacts = h.store.get(id).orElseThrow().paused().orElseThrow().artifactDir();
        try (var files = Files.list(artifacts)) {
            for (Path file : files.toList()) {
                Files.delete(file);
            }
        }
        // when
        h.restart();
        // then
        assertThat(h.store.get(id)).isEmpty();
    }

    @Test
    void orphaned_artifact_directories_are_swept_at_startup() throws Exception {
        // given
        SandboxId id = h.create();
        h.orchestrator.pause(id, PauseMode.WITH_MEMORY);
        Path kept = h.store.get(id).orElseThrow().paused().orElseThrow().artifactDir();
        Path orphanSnapshot = Files.createDirectories(h.artifactRoot().resolve("snapshots/leftover"));
        Path orphanFork = Files.createDirectories(h.artifactRoot().resolve("forks/x-1"));
        Path orphanGeneration = Files.createDirectories(kept.getParent().resolve("older"));
        // when
        h.restart();
        // then
        assertThat(kept).exists();
        assertThat(orphanSnapshot).doesNotExist();
        assertThat(orphanFork).doesNotExist();
        assertThat(orphanGeneration).doesNotExist();
    }

    @Test
    void a_surviving_instance_that_no_record_claims_is_reaped_after_recovery() {
        // given: a sandbox still runs on the host, but its record is gone (deleted while the server was down)
        SandboxId orphan = h.create();
        SandboxId kept = h.create();
        h.store.delete(orphan, EnumSet.allOf(SandboxState.class));
        // when
        h.restart();
        // then
        assertThat(h.backend.openInstances()).extracting(s -> s.spec().id()).containsExactly(kept);
        assertThat(h.backend.count(MockOp.REAP)).isEqualTo(2); // once per start
    }

    @Test
    void snapshots_survive_a_restart_and_can_still_be_launched() {
        // given
        SandboxId id = h.create();
        SnapshotView snapshot = h.orchestrator.snapshot(id, Optional.of("keep-me"));
        h.restart();
        // when
        SandboxView child = h.orchestrator.create(CreateSandbox.of("keep-me", Duration.ofSeconds(10)));
        // then
        assertThat(child.template()).isEqualTo(snapshot.id());
        assertThat(child.state()).isEqualTo(SandboxState.RUNNING);
    }

    @Test
    void shutdown_pauses_running_sandboxes_refuses_new_work_and_they_resume_after_restart() {
        // given
        SandboxId running = h.create();
        SandboxId paused = h.create();
        h.orchestrator.pause(paused, PauseMode.WITH_MEMORY);
        // when
        h.orchestrator.shutdown();
        // then
        assertThat(h.state(running)).isEqualTo(SandboxState.PAUSED);
        assertThat(h.backend.openInstances()).isEmpty();
        assertThatThrownBy(() -> h.orchestrator.create(CreateSandbox.of("base", Duration.ofSeconds(1))))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.UNAVAILABLE));
        assertThat(h.orchestrator.get(running).state()).isEqualTo(SandboxState.PAUSED); // reads still work
        h.restart();
        assertThat(h.orchestrator.connect(running, Duration.ofSeconds(5)).outcome())
                .isEqualTo(ConnectResult.Outcome.RESUMED);
        assertThat(h.orchestrator.connect(paused, Duration.ofSeconds(5)).outcome())
                .isEqualTo(ConnectResult.Outcome.RESUMED);
    }
}
