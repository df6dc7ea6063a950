package io.agentenv.backend.container.leftovers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.FreshHostFixture;
import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.host.HostFixture.Sandbox;
import io.agentenv.backend.container.network.NetSlot;
import io.agentenv.backend.container.runtime.ContainerSpec;
import io.agentenv.backend.container.runtime.RuncRuntime;
import io.agentenv.backend.container.storage.SandboxDirs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Finding and removing what a crashed server left, and the errors runc and CRIU failures turn into. */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class HostInventoryHostTest {

    private static final List<String> IDLE = List.of("/bin/sh", "-c", "sleep 1000000 & wait");

    @FreshHostFixture
    private HostFixture host;

    @Test
    void everything_a_crashed_server_left_is_found_and_removed() throws Exception {
        // given running and frozen sandboxes whose owner vanished without cleaning up
        Sandbox running = host.run("left1", IDLE, HostFixture.LIMITS, ContainerSpec.Privileges.NO_NEW_PRIVILEGES);
        Sandbox frozen = host.run("left2", IDLE, HostFixture.LIMITS, ContainerSpec.Privileges.NO_NEW_PRIVILEGES);
        HostFixture.await(
                "the init has exec'd and started its child",
                java.time.Duration.ofSeconds(10),
                () -> pidCount(frozen) >= 2);
        host.cgroups.freeze(frozen.id());
        long pid = host.runc.state(running.id()).orElseThrow().pid();

        // when
        Leftovers found = host.inventory.scan(host.idPrefix);

        // then
        assertThat(found.containers()).containsExactlyInAnyOrder(running.id(), frozen.id());
        assertThat(found.cgroups())
                .containsExactlyInAnyOrder(running.id().value(), frozen.id().value());
        assertThat(found.processes()).contains(pid);
        assertThat(found.mounts()).containsExactlyInAnyOrder(running.rootfs(), frozen.rootfs());
        assertThat(found.network())
                .contains(running.slot().netnsName(), frozen.slot().hostVeth());

        // when
        host.inventory.reap(host.idPrefix);

        // then
        assertThat(host.inventory.scan(host.idPrefix).isEmpty()).isTrue();
        HostFixture.await(
                "the sandbox's processes are gone",
                java.time.Duration.ofSeconds(10),
                () -> ProcessHandle.of(pid).isEmpty());
    }

    @Test
    void a_runc_state_dir_an_interrupted_restore_left_is_found_and_removed_by_the_reaper() throws Exception {
        // given the state dir of a container runc never recorded (no state.json), with the criu-root a restore makes
        Path stray = host.runc.stateRoot().resolve(host.idPrefix + "stray");
        Files.createDirectories(stray.resolve("criu-root"));

        // when
        Leftovers found = host.inventory.scan(host.idPrefix);

        // then
        assertThat(found.containers()).isEmpty();
        assertThat(found.stateDirs()).containsExactly(stray);

        // when
        host.inventory.reap(host.idPrefix);

        // then
        assertThat(stray).doesNotExist();
        assertThat(host.inventory.scan(host.idPrefix).isEmpty()).isTrue();
    }

    @Test
    void deleting_a_container_runc_does_not_know_removes_the_state_dir_it_left() throws Exception {
        // given
        ContainerId id = new ContainerId(host.idPrefix + "stray");
        Path stray = host.runc.stateRoot().resolve(id.value());
        Files.createDirectories(stray.resolve("criu-root"));

        // when (the rollback of an interrupted restore)
        host.runc.delete(id);

        // then
        assertThat(stray).doesNotExist();
    }

    private int pidCount(Sandbox sandbox) {
        try {
            return host.cgroups.pids(sandbox.id().value()).size();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void an_orphaned_cgroup_with_processes_is_killed_and_removed() throws Exception {
        // given a cgroup whose container runc no longer knows (its state dir was lost)
        Sandbox sandbox = host.run("orphan", IDLE, HostFixture.LIMITS, ContainerSpec.Privileges.NO_NEW_PRIVILEGES);
        long pid = host.runc.state(sandbox.id()).orElseThrow().pid();
        HostFixture.deleteTree(host.layout.runcRoot().resolve(sandbox.id().value()));
        assertThat(host.runc.state(sandbox.id())).isEmpty();

        // when
        host.cgroups.reap(sandbox.id().value());

        // then
        assertThat(host.cgroups.pathsOf(sandbox.id().value())).isEmpty();
        HostFixture.await(
                "the orphan's processes are gone",
                java.time.Duration.ofSeconds(10),
                () -> ProcessHandle.of(pid).isEmpty());
        host.overlays.unmount(sandbox.rootfs());
        host.pool.release(sandbox.slot());
    }

    @Test
    void runc_and_criu_failures_carry_their_own_explanation() throws Exception {
        // a bundle whose rootfs does not exist
        ContainerId id = host.newId("broken");
        SandboxDirs dirs = SandboxDirs.of(host.sandboxesDir, id);
        NetSlot slot = host.pool.acquire();
        try {
            Files.createDirectories(dirs.envd());
            RuncRuntime.writeConfig(
                    dirs.bundle(),
                    host.ociSpecs.build(new ContainerSpec(
                            id,
                            dirs.rootfs(),
                            "sandbox",
                            new ContainerSpec.InitProcess(IDLE, List.of(), "/", 0, 0),
                            HostFixture.network(slot),
                            HostFixture.GUEST_IDS,
                            HostFixture.LIMITS,
                            Optional.empty(),
                            List.of(),
                            dirs.envd(),
                            "/run/envd",
                            Optional.empty(),
                            host.layout.criuRuncConfig(),
                            ContainerSpec.Privileges.NO_NEW_PRIVILEGES)));

            assertThatThrownBy(() -> host.runc.create(id, dirs.bundle()))
                    .isInstanceOfSatisfying(
                            CommandFailedException.class,
                            e -> assertThat(e.stderrTail()).contains("rootfs"));

            // restoring from images that do not exist
            Path noImages = host.sandboxesDir.resolve("no-images");
            Files.createDirectories(noImages);
            assertThatThrownBy(() -> host.runc.restore(id, dirs.bundle(), noImages, dirs.restoreWork()))
                    .isInstanceOfSatisfying(
                            CommandFailedException.class,
                            e -> assertThat(e.getMessage()).isNotBlank().contains("restore"));

            // operations on a container that does not exist
            assertThat(host.runc.state(host.newId("never"))).isEmpty();
            host.runc.delete(host.newId("never"));
            host.runc.kill(host.newId("never"), "KILL");
            assertThatThrownBy(() -> host.runc.pause(host.newId("never")))
                    .isInstanceOfSatisfying(
                            CommandFailedException.class,
                            e -> assertThat(e.stderrTail()).contains("does not exist"));
        } finally {
            host.runc.delete(id);
            host.pool.release(slot);
        }
    }
}
