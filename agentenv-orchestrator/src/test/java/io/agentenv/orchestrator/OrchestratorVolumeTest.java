package io.agentenv.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import io.agentenv.spi.VolumeMount;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Volume mounts: checked and resolved at create, then kept by every launch of the sandbox, its forks and snapshots. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
@ExtendWith(OrchestratorExtension.class)
class OrchestratorVolumeTest {
    private static final String DATA_ID = "aaaaaaaaaaaaaaaaaaaa";
    private static final String MODELS_ID = "bbbbbbbbbbbbbbbbbbbb";

    OrchestratorHarness h;
    Orchestrator orchestrator;

    @BeforeEach
    void setUp(OrchestratorHarness harness) {
        h = harness;
        orchestrator = h.orchestrator;
        h.volumes.add(DATA_ID, "data");
        h.volumes.add(MODELS_ID, "models");
    }

    private static CreateSandbox request(String template, VolumeMountRequest... mounts) {
        return new CreateSandbox(
                template,
                Duration.ofSeconds(300),
                TimeoutAction.KILL,
                PauseMode.WITH_MEMORY,
                false,
                Map.of(),
                Map.of(),
                NetworkPolicy.DEFAULT,
                "{}",
                true,
                Optional.empty(),
                List.of(mounts));
    }

    private static final VolumeAttachment DATA = new VolumeAttachment(DATA_ID, "data", "/data", false);
    private static final VolumeAttachment MODELS = new VolumeAttachment(MODELS_ID, "models", "/home/user/m", true);

    private SandboxView createWithBoth() {
        return orchestrator.create(request(
                "base",
                new VolumeMountRequest("data", "/data", false),
                new VolumeMountRequest(MODELS_ID, "/home/user/m", true)));
    }

    private List<VolumeMount> launched(SandboxId id) {
        return h.backend.instance(id).orElseThrow().spec().volumeMounts();
    }

    private static final List<VolumeMount> BOTH_MOUNTS = List.of(
            new VolumeMount(DATA_ID, FakeVolumeCatalog.contentOf(DATA_ID), "/data", false),
            new VolumeMount(MODELS_ID, FakeVolumeCatalog.contentOf(MODELS_ID), "/home/user/m", true));

    @Test
    void a_create_mounts_volumes_named_by_name_or_id_and_records_them() {
        SandboxView view = createWithBoth();

        assertThat(view.volumes()).containsExactly(DATA, MODELS);
        assertThat(h.store.get(view.id()).orElseThrow().volumes()).containsExactly(DATA, MODELS);
        assertThat(launched(view.id())).containsExactlyElementsOf(BOTH_MOUNTS);
        assertThat(h.store.mounting(DATA_ID)).containsExactly(view.id());
        assertThat(h.volumes.unguardedLookups).hasValue(0);
    }

    @Test
    void a_create_with_volumes_takes_no_ready_instance() {
        h.backend.keepReady(new TemplateId("base"), 1);

        createWithBoth();

        assertThat(h.backend.takenReservations()).isEmpty();
    }

    @Test
    void an_unknown_volume_is_refused_naming_it_and_nothing_is_launched() {
        assertThatThrownBy(() -> orchestrator.create(request("base", new VolumeMountRequest("nope", "/data", false))))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT))
                .hasMessageContaining("volume nope not found");
        assertThat(h.backend.instances()).isEmpty();
        assertThat(h.store.all()).isEmpty();
    }

    @Test
    void bad_mount_paths_are_refused_before_any_volume_is_looked_up() {
        List<List<VolumeMountRequest>> bad = List.of(
                List.of(new VolumeMountRequest("data", "data", false)),
                List.of(new VolumeMountRequest("data", "/", false)),
                List.of(new VolumeMountRequest("data", "/data/", false)),
                List.of(new VolumeMountRequest("data", "/a/../data", false)),
                List.of(new VolumeMountRequest("data", "/usr", false)),
                List.of(new VolumeMountRequest("data", "/usr/lib", false)),
                List.of(new VolumeMountRequest("data", "/home", false)),
                List.of(new VolumeMountRequest("data", "/proc/data", false)),
                List.of(new VolumeMountRequest("data", "/run/envd", false)),
                List.of(new VolumeMountRequest("data", "/etc/app", false)),
                List.of(new VolumeMountRequest("data", "/usr/lib/jvm/x", false)),
                List.of(new VolumeMountRequest("", "/data", false)),
                List.of(
                        new VolumeMountRequest("data", "/data", false),
                        new VolumeMountRequest("models", "/data", true)),
                List.of(
                        new VolumeMountRequest("data", "/data", false),
                        new VolumeMountRequest("models", "/data/m", true)));
        for (List<VolumeMountRequest> mounts : bad) {
            assertThatThrownBy(() -> orchestrator.create(request("base", mounts.toArray(VolumeMountRequest[]::new))))
                    .as(mounts.toString())
                    .isInstanceOfSatisfying(
                            AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT));
        }
        assertThat(h.volumes.unguardedLookups).hasValue(0);
        assertThat(h.backend.instances()).isEmpty();
    }

    @Test
    void paths_in_a_directory_of_their_own_are_accepted() {
        for (String path : List.of("/data", "/home/user/data", "/mnt/x", "/workspace", "/var/lib/app", "/tmp/cache")) {
            VolumeMounts.check(List.of(new VolumeMountRequest("data", path, false)));
        }
    }

    @Test
    void a_resume_and_a_restart_launch_with_the_same_volumes() {
        SandboxId id = createWithBoth().id();

        orchestrator.pause(id, PauseMode.WITH_MEMORY);
        h.restart();
        h.orchestrator.resume(id, Duration.ofSeconds(60));

        assertThat(h.store.get(id).orElseThrow().volumes()).containsExactly(DATA, MODELS);
        assertThat(launched(id)).containsExactlyElementsOf(BOTH_MOUNTS);
    }

    @Test
    void fork_children_mount_the_parents_volumes() {
        SandboxId parent = createWithBoth().id();

        List<ForkResult> children = orchestrator.fork(parent, 2, Optional.empty());

        assertThat(children).hasSize(2).allSatisfy(r -> {
            SandboxId child = ((ForkResult.Child) r).sandbox().id();
            assertThat(h.store.get(child).orElseThrow().volumes()).containsExactly(DATA, MODELS);
            assertThat(launched(child)).containsExactlyElementsOf(BOTH_MOUNTS);
        });
        assertThat(h.store.mounting(DATA_ID)).hasSize(3);
    }

    @Test
    void a_sandbox_from_a_snapshot_mounts_the_snapshots_volumes() {
        SandboxId source = createWithBoth().id();
        orchestrator.snapshot(source, Optional.of("with-volumes"));

        SandboxView inherited = orchestrator.create(request("with-volumes"));
        SandboxView named = orchestrator.create(request(
                "with-volumes",
                new VolumeMountRequest(MODELS_ID, "/home/user/m", true),
                new VolumeMountRequest("data", "/data", false)));

        assertThat(inherited.volumes()).containsExactly(DATA, MODELS);
        assertThat(launched(inherited.id())).containsExactlyElementsOf(BOTH_MOUNTS);
        assertThat(named.volumes()).containsExactly(DATA, MODELS);
    }

    @Test
    void a_snapshot_create_naming_other_volumes_or_a_deleted_one_is_refused() {
        SandboxId source = createWithBoth().id();
        orchestrator.snapshot(source, Optional.of("with-volumes"));

        assertThatThrownBy(() ->
                        orchestrator.create(request("with-volumes", new VolumeMountRequest("data", "/other", false))))
                .isInstanceOf(AgentEnvException.class)
                .hasMessageContaining("mounts the same ones");
        orchestrator.kill(source);
        h.volumes.remove(MODELS_ID);
        assertThatThrownBy(() -> orchestrator.create(request("with-volumes")))
                .isInstanceOf(AgentEnvException.class)
                .hasMessageContaining("models (" + MODELS_ID + ")")
                .hasMessageContaining("no longer exists");
    }

    @Test
    void a_snapshot_without_volumes_can_be_created_with_some() {
        SandboxId source = h.create();
        orchestrator.snapshot(source, Optional.of("plain"));

        SandboxView view = orchestrator.create(request("plain", new VolumeMountRequest("data", "/data", false)));

        assertThat(view.volumes()).containsExactly(DATA);
        assertThat(launched(view.id())).containsExactly(BOTH_MOUNTS.getFirst());
    }

    @Test
    void a_killed_sandbox_no_longer_mounts_its_volumes() {
        SandboxId id = createWithBoth().id();

        orchestrator.kill(id);

        assertThat(h.store.mounting(DATA_ID)).isEmpty();
        assertThat(h.store.mounting(MODELS_ID)).isEmpty();
    }
}
