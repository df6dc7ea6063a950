package io.agentenv.backend.container.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.host.FreshHostFixture;
import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.host.HostFixture.Sandbox;
import io.agentenv.backend.container.storage.LayerCapture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The building blocks together on this host: template overlay, netns slot, runc, CRIU checkpoint, restore and fork. */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ContainerLifecycleHostTest {

    /** Init: a background sleep whose pid is recorded, and a shell waiting for it. */
    private static final List<String> INIT = List.of("/bin/sh", "-c", "sleep 1000000 & echo $! > /root/bg.pid; wait");

    private static final Duration EXEC = Duration.ofSeconds(20);

    @FreshHostFixture
    private HostFixture host;

    private Sandbox prepare(String name, List<Path> lowers) throws Exception {
        return host.prepare(name, lowers, INIT);
    }

    private void destroy(Sandbox sandbox) throws Exception {
        host.destroy(sandbox);
    }

    private String exec(Sandbox sandbox, String... args) throws Exception {
        return host.exec(sandbox, args);
    }

    private void awaitBackgroundPid(Sandbox sandbox) {
        HostFixture.await(
                "the init wrote its background pid",
                Duration.ofSeconds(10),
                () -> Files.exists(sandbox.upper().resolve("root/bg.pid")));
    }

    @Test
    void a_checkpointed_container_restores_processes_and_files_and_forks_a_separate_copy() throws Exception {
        // given a running sandbox from the base template, with a background process and a file written inside
        Path template = host.templateRootfs();
        Sandbox original = prepare("a", List.of(template));
        host.runc.create(original.id(), original.bundle());
        host.runc.start(original.id());
        ContainerState running = host.runc.state(original.id()).orElseThrow();
        assertThat(running.status()).isEqualTo(ContainerState.Status.RUNNING);
        awaitBackgroundPid(original);
        String bgPid = exec(original, "cat", "/root/bg.pid");
        assertThat(exec(original, "cat", "/proc/" + bgPid + "/comm")).isEqualTo("sleep");
        exec(original, "sh", "-c", "echo kept > /home/user/note");
        assertThat(exec(original, "id", "-un", "1000")).isEqualTo("user");
        assertThat(exec(original, "ip", "-4", "-o", "addr", "show", "eth0"))
                .contains(original.slot().sandboxAddress() + "/30");
        assertThat(host.runc
                        .exec(
                                original.id(),
                                List.of(HostFixture.JDK.resolve("bin/java").toString(), "-version"),
                                EXEC)
                        .stderr())
                .contains("version \"25");
        assertThat(host.cgroups.memoryUsage(original.id()))
                .hasValueSatisfying(bytes -> assertThat(bytes).isPositive());
        assertThat(host.cgroups.residentBytes(original.id()))
                .hasValueSatisfying(bytes -> assertThat(bytes).isBetween(1L, 512L << 20));

        // when it is checkpointed to disk and stopped
        Path images = host.sandboxesDir.resolve("checkpoint/images");
        host.runc.checkpoint(
                original.id(), images, host.sandboxesDir.resolve("checkpoint/work"), RuncRuntime.AfterCheckpoint.STOP);

        // then its processes are gone and, once deleted, so is its cgroup (its memory is released)
        HostFixture.await(
                "the checkpointed init has exited",
                Duration.ofSeconds(10),
                () -> ProcessHandle.of(running.pid()).isEmpty());
        host.runc.delete(original.id());
        assertThat(host.cgroups.pathsOf(original.id().value())).isEmpty();
        assertThat(Files.readString(original.upper().resolve("home/user/note"))).isEqualTo("kept\n");

        // and its filesystem changes can be captured as a layer for copies
        Path layer = host.sandboxesDir.resolve("layer");
        new LayerCapture(host.runner, Duration.ofSeconds(60)).capture(original.upper(), layer);

        // when it is restored in place
        host.runc.restore(original.id(), original.bundle(), images, original.restoreWork());

        // then the same background process (same pid inside) and the file are back
        assertThat(host.runc.state(original.id()).orElseThrow().status()).isEqualTo(ContainerState.Status.RUNNING);
        assertThat(exec(original, "cat", "/proc/" + bgPid + "/comm")).isEqualTo("sleep");
        assertThat(exec(original, "cat", "/home/user/note")).isEqualTo("kept");

        // when a second copy is restored from the same checkpoint into its own overlay (layer over template) and netns
        Sandbox fork = prepare("b", List.of(layer, template));
        host.runc.restore(fork.id(), fork.bundle(), images, fork.restoreWork());

        // then the fork runs the same process tree, sees the captured file, and has its own address and files
        assertThat(host.runc.state(fork.id()).orElseThrow().status()).isEqualTo(ContainerState.Status.RUNNING);
        assertThat(exec(fork, "cat", "/proc/" + bgPid + "/comm")).isEqualTo("sleep");
        assertThat(exec(fork, "cat", "/home/user/note")).isEqualTo("kept");
        assertThat(exec(fork, "ip", "-4", "-o", "addr", "show", "eth0"))
                .contains(fork.slot().sandboxAddress() + "/30");
        exec(fork, "sh", "-c", "echo fork > /home/user/only-in-fork");
        assertThat(exec(original, "ls", "/home/user")).isEqualTo("note");
        assertThat(Files.exists(fork.upper().resolve("home/user/only-in-fork"))).isTrue();
        assertThat(host.runc.state(fork.id()).orElseThrow().pid())
                .isNotEqualTo(host.runc.state(original.id()).orElseThrow().pid());

        // finally both are torn down; the fixture's leak check proves nothing is left
        destroy(fork);
        destroy(original);
    }

    @Test
    void a_frozen_snapshot_leaves_the_source_running_and_restores_as_a_separate_copy() throws Exception {
        // given a running sandbox with a file
        Path template = host.templateRootfs();
        Sandbox source = prepare("src", List.of(template));
        host.runc.create(source.id(), source.bundle());
        host.runc.start(source.id());
        awaitBackgroundPid(source);
        String bgPid = exec(source, "cat", "/root/bg.pid");
        exec(source, "sh", "-c", "echo before > /root/state");

        // when it is frozen through the cgroup, its upper captured, checkpointed with leave-running, and thawed
        host.cgroups.freeze(source.id());
        assertThat(host.runc.state(source.id()).orElseThrow().status()).isEqualTo(ContainerState.Status.PAUSED);
        Path layer = host.sandboxesDir.resolve("snapshot/layer");
        new LayerCapture(host.runner, Duration.ofSeconds(60)).capture(source.upper(), layer);
        Path images = host.sandboxesDir.resolve("snapshot/images");
        host.runc.checkpoint(
                source.id(),
                images,
                host.sandboxesDir.resolve("snapshot/work"),
                RuncRuntime.AfterCheckpoint.LEAVE_RUNNING);
        host.cgroups.thaw(source.id());

        // then the source runs on unchanged and can change further
        assertThat(host.runc.state(source.id()).orElseThrow().status()).isEqualTo(ContainerState.Status.RUNNING);
        assertThat(exec(source, "cat", "/proc/" + bgPid + "/comm")).isEqualTo("sleep");
        exec(source, "sh", "-c", "echo after > /root/state");
        assertThat(host.cgroups.cpuUsageNanos(source.id()))
                .hasValueSatisfying(ns -> assertThat(ns).isPositive());

        // when a copy is restored from the snapshot
        Sandbox copy = prepare("copy", List.of(layer, template));
        host.runc.restore(copy.id(), copy.bundle(), images, copy.restoreWork());

        // then it has the snapshot's state, not the source's later one
        assertThat(exec(copy, "cat", "/root/state")).isEqualTo("before");
        assertThat(exec(copy, "cat", "/proc/" + bgPid + "/comm")).isEqualTo("sleep");
        assertThat(exec(source, "cat", "/root/state")).isEqualTo("after");

        destroy(copy);
        destroy(source);
    }

    @Test
    void a_paused_container_is_frozen_and_resumes() throws Exception {
        // given
        Sandbox sandbox = prepare("p", List.of(host.templateRootfs()));
        host.runc.create(sandbox.id(), sandbox.bundle());
        host.runc.start(sandbox.id());
        awaitBackgroundPid(sandbox);

        // when
        host.runc.pause(sandbox.id());

        // then
        assertThat(host.runc.state(sandbox.id()).orElseThrow().status()).isEqualTo(ContainerState.Status.PAUSED);
        Path freezer = host.cgroups.pathsOf(sandbox.id().value()).stream()
                .filter(p -> p.startsWith(host.layout.cgroupRoot().resolve("freezer")))
                .findFirst()
                .orElseThrow();
        assertThat(Files.readString(freezer.resolve("freezer.state")).strip()).isEqualTo("FROZEN");

        // when
        host.runc.resume(sandbox.id());

        // then
        assertThat(host.runc.state(sandbox.id()).orElseThrow().status()).isEqualTo(ContainerState.Status.RUNNING);
        assertThat(exec(sandbox, "cat", "/root/bg.pid")).isNotBlank();
        destroy(sandbox);
    }
}
