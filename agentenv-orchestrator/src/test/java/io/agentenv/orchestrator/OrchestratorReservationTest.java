package io.agentenv.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.mock.MockAction;
import io.agentenv.backend.mock.MockOp;
import io.agentenv.backend.mock.MockSandbox;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Creates from a template launch under the id of a ready instance the backend reserved, and give it back on failure. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
@ExtendWith(OrchestratorExtension.class)
class OrchestratorReservationTest {
    private static final TemplateId BASE = new TemplateId("base");

    OrchestratorHarness h;
    Orchestrator orchestrator;

    @BeforeEach
    void setUp(OrchestratorHarness harness) {
        h = harness;
        orchestrator = h.orchestrator;
    }

    private SandboxView create() {
        return orchestrator.create(CreateSandbox.of("base", Duration.ofSeconds(60)));
    }

    @Test
    void a_create_from_a_template_with_a_ready_instance_runs_under_the_proposed_id() {
        // given
        h.backend.keepReady(BASE, 2);
        List<SandboxId> proposed = h.backend.readyIds(BASE);
        // when
        SandboxView view = create();
        // then
        assertThat(view.id()).isEqualTo(proposed.getFirst());
        assertThat(view.state()).isEqualTo(SandboxState.RUNNING);
        assertThat(h.backend
                        .instance(view.id())
                        .orElseThrow()
                        .spec()
                        .accessToken()
                        .value())
                .isEqualTo("token-" + proposed.getFirst().value());
        assertThat(h.backend.takenReservations()).containsExactly(proposed.getFirst());
        assertThat(h.backend.readyIds(BASE)).containsExactly(proposed.get(1));
        assertThat(h.backend.outstandingReservations()).isEmpty();
        assertThat(h.store.get(view.id()).orElseThrow().state()).isEqualTo(SandboxState.RUNNING);
    }

    @Test
    void a_create_from_a_snapshot_with_a_ready_restore_runs_under_its_id_until_deleted() {
        // given a snapshot whose restores the backend keeps ready
        SandboxView source = create();
        SnapshotView snapshot = orchestrator.snapshot(source.id(), Optional.of("prepared"));
        h.backend.keepReady(snapshot.id(), 1);
        SandboxId proposed = h.backend.readyIds(snapshot.id()).getFirst();
        // when
        SandboxView view = orchestrator.create(CreateSandbox.of("prepared", Duration.ofSeconds(60)));
        // then
        assertThat(view.id()).isEqualTo(proposed);
        assertThat(h.backend.takenReservations()).containsExactly(proposed);
        assertThat(h.backend.outstandingReservations()).isEmpty();
        // the backend learnt what the snapshot's sandboxes get when a create asks for nothing more
        assertThat(h.backend.snapshotDefaults().get(snapshot.id()).defaultUser())
                .contains(OrchestratorSettings.DEFAULT_USER);
        // a template build's sandbox does not ask for a ready restore
        h.backend.keepReady(snapshot.id(), 1);
        SandboxView build = orchestrator.create(new CreateSandbox(
                "prepared",
                Duration.ofSeconds(60),
                TimeoutAction.KILL,
                PauseMode.WITH_MEMORY,
                false,
                Map.of(),
                Map.of(TemplateBuilder.BUILD_METADATA, "b1"),
                NetworkPolicy.DEFAULT,
                CustomExtensionParams.EMPTY,
                true,
                Optional.empty(),
                List.of()));
        assertThat(build.id()).isNotEqualTo(h.backend.readyIds(snapshot.id()).getFirst());
        assertThat(h.backend.takenReservations()).containsExactly(proposed);
        // and a deleted snapshot is no longer kept ready
        assertThat(orchestrator.deleteTemplate("prepared")).isTrue();
        assertThat(h.backend.deletedSnapshots()).containsExactly(snapshot.id());
    }

    @Test
    void without_a_ready_instance_a_create_picks_an_id_of_its_own() {
        SandboxView view = create();

        assertThat(view.state()).isEqualTo(SandboxState.RUNNING);
        assertThat(h.backend.takenReservations()).isEmpty();
        assertThat(h.backend.outstandingReservations()).isEmpty();
    }

    @Test
    void a_create_whose_prepare_fails_gives_the_reserved_instance_back_to_the_next_create() {
        // given
        h.backend.keepReady(BASE, 1);
        SandboxId proposed = h.backend.readyIds(BASE).getFirst();
        h.backend.script(MockOp.PREPARE, MockAction.recoverable("no slot"));
        // when
        assertThatThrownBy(this::create).isInstanceOf(AgentEnvException.class);
        // then
        assertThat(h.backend.readyIds(BASE)).containsExactly(proposed);
        assertThat(h.backend.outstandingReservations()).isEmpty();
        assertThat(h.store.all()).isEmpty();
        assertThat(create().id()).isEqualTo(proposed);
    }

    @Test
    void a_create_whose_start_fails_closes_the_taken_instance_never_to_be_proposed_again() {
        // given
        h.backend.keepReady(BASE, 1);
        SandboxId proposed = h.backend.readyIds(BASE).getFirst();
        h.backend.script(MockOp.START, MockAction.terminal("envd died"));
        // when
        assertThatThrownBy(this::create).isInstanceOf(AgentEnvException.class);
        // then
        assertThat(h.backend.instance(proposed).orElseThrow().status()).isEqualTo(MockSandbox.Status.CLOSED);
        assertThat(h.backend.readyIds(BASE)).isEmpty();
        assertThat(h.backend.outstandingReservations()).isEmpty();
        assertThat(h.backend.openInstances()).isEmpty();
        assertThat(h.store.all()).isEmpty();
        assertThat(create().id()).isNotEqualTo(proposed);
    }

    @Test
    void a_create_from_a_snapshot_leaves_ready_instances_to_template_creates() {
        // given
        SandboxId source = create().id();
        orchestrator.snapshot(source, Optional.of("snap"));
        h.backend.keepReady(BASE, 1);
        SandboxId proposed = h.backend.readyIds(BASE).getFirst();
        // when
        SandboxView child = orchestrator.create(CreateSandbox.of("snap", Duration.ofSeconds(60)));
        // then
        assertThat(child.id()).isNotEqualTo(proposed);
        assertThat(h.backend.instance(child.id()).orElseThrow().source()).isInstanceOf(LaunchSource.Snapshot.class);
        assertThat(h.backend.readyIds(BASE)).containsExactly(proposed);
        assertThat(h.backend.outstandingReservations()).isEmpty();
    }
}
