package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.JdkProcessRunner;
import io.agentenv.backend.container.leftovers.HostInventory;
import io.agentenv.backend.container.lifecycle.SavedStates;
import io.agentenv.backend.container.storage.LoopDevices;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.TemplateId;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A {@code runc restore} that fails leaves nothing behind: not the {@code criu-root} mount runc makes in its state dir
 * (an overlay holding the sandbox's disk and its loop device), not the state dir; the leak checks look there, and the
 * start-up reaper removes such a mount a crashed server left.
 */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class RestoreFailureHostTest {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Duration READY = Duration.ofSeconds(60);
    private static final TemplateId BASE = new TemplateId("base");

    private BackendFixture backend;

    @AfterEach
    void tearDown() throws Exception {
        if (backend == null) {
            return;
        }
        try {
            backend.closeLaunched();
            backend.assertNothingLeaked();
        } finally {
            backend.close();
        }
    }

    private HostInventory inventory() {
        ContainerBackendFactory p = backend.factory;
        return new HostInventory(
                p.runc(), p.cgroups(), p.overlays(), p.pool(), p.names().sandboxesDir());
    }

    @Test
    void a_resume_from_a_truncated_memory_image_fails_cleanly_and_resumes_once_repaired() throws Exception {
        // given a sandbox paused to disk with a background process, whose largest memory image is then cut in half:
        // CRIU then waits on the restored memory until the restore's deadline, and runc is killed there
        backend = BackendFixture.create(Map.of("criu_timeout_s", "15"));
        LaunchSpec spec = BackendFixture.baseSpec();
        SandboxBackend sandbox = backend.launch(spec, new LaunchSource.Template(BASE));
        String sleeper = ContainerBackendHostTest.background(sandbox, spec);
        Path dir = backend.workDir.resolve("artifacts-truncated-" + Long.toHexString(RANDOM.nextLong()));
        SavedStates.Paused paused = (SavedStates.Paused) sandbox.pause(PauseMode.WITH_MEMORY, dir);
        sandbox.close();
        Path pages;
        try (Stream<Path> images = Files.list(paused.images())) {
            pages = images.filter(f -> f.getFileName().toString().startsWith("pages-"))
                    .max(Comparator.comparingLong(RestoreFailureHostTest::size))
                    .orElseThrow();
        }
        Path intact = backend.workDir.resolve("intact-" + pages.getFileName());
        Files.copy(pages, intact, StandardCopyOption.COPY_ATTRIBUTES);
        try (FileChannel channel = FileChannel.open(pages, StandardOpenOption.WRITE)) {
            channel.truncate(channel.size() / 2);
        }
        ContainerId container = backend.factory.names().containerId(spec.id());

        // when it resumes
        SandboxBackend failed = backend.factory.prepare(
                spec, new LaunchSource.Paused(backend.factory.decodePausedState(paused.encode(), dir)));
        assertThatThrownBy(() -> failed.start(READY)).isInstanceOf(BackendException.Terminal.class);

        // then, before the instance is even closed, runc's state dir holds no mount and is gone
        assertThat(inventory().stateDirMounts(backend.factory.settings().idPrefix()))
                .as("mounts in runc's state dirs")
                .isEmpty();
        assertThat(backend.factory.runc().stateRoot().resolve(container.value()))
                .as("runc's state dir")
                .doesNotExist();
        failed.close();
        backend.assertNothingLeaked();

        // and once the image is whole again the paused state resumes with its process
        Files.move(intact, pages, StandardCopyOption.REPLACE_EXISTING);
        backend.launch(spec, new LaunchSource.Paused(backend.factory.decodePausedState(paused.encode(), dir)));
        assertThat(backend.exec(spec.id(), "cat", "/proc/" + sleeper + "/comm")).isEqualTo("sleep");
        FileTrees.deleteTree(dir);
    }

    @Test
    void the_reaper_removes_a_crashed_servers_criu_root_mount_its_disk_and_loop_device() throws Exception {
        // given a sandbox whose rootfs is bind-mounted into its runc state dir as a restore does, and a backend that
        // dies
        backend = BackendFixture.create(Map.of());
        LaunchSpec spec = BackendFixture.baseSpec();
        backend.launch(spec, new LaunchSource.Template(BASE));
        ContainerBackendFactory p = backend.factory;
        ContainerId container = p.names().containerId(spec.id());
        Path criuRoot = Files.createDirectories(
                p.runc().stateRoot().resolve(container.value()).resolve("criu-root"));
        new JdkProcessRunner()
                .run(Command.of(
                        Duration.ofSeconds(10),
                        "mount",
                        "--rbind",
                        p.names().dirs(container).rootfs().toString(),
                        criuRoot.toString()));
        assertThat(inventory().stateDirMounts(p.settings().idPrefix()))
                .as("what the leak check sees")
                .contains(criuRoot);
        // and a loop device still attached to a disk image in a dir of a sandbox that no longer exists
        Path orphanImage = Files.createDirectories(
                        p.names().sandboxesDir().resolve(p.settings().idPrefix() + "orphan"))
                .resolve("disk.img");
        try (FileChannel channel =
                FileChannel.open(orphanImage, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            channel.truncate(0).position(8L * 1024 * 1024 - 1).write(java.nio.ByteBuffer.wrap(new byte[1]));
        }
        new JdkProcessRunner().run(Command.of(Duration.ofSeconds(10), "losetup", "--find", orphanImage.toString()));
        assertThat(LoopDevices.backedUnder(p.names().sandboxesDir()))
                .as("what the leak check sees")
                .anySatisfy(loop -> assertThat(loop.backingPath()).isEqualTo(orphanImage));
        backend.abandonLaunched(); // abandoned, as by kill -9

        // when a new backend starts on the same host and claims nothing
        ContainerBackendFactory restarted = backend.restarted();
        try {
            restarted.reapUnclaimed(Set.of());
        } finally {
            restarted.shutdown();
        }

        // then the mount, the state dir, the sandbox's disk and its loop device are gone (the leak check after the
        // test)
        assertThat(inventory().stateDirMounts(p.settings().idPrefix())).isEmpty();
        assertThat(criuRoot.getParent()).doesNotExist();
        assertThat(LoopDevices.backedUnder(p.names().sandboxesDir())).isEmpty();
        assertThat(orphanImage.getParent()).doesNotExist();
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
