package io.agentenv.backend.container.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.BackendFixture;
import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.host.JdkProcessRunner;
import io.agentenv.backend.container.host.MountTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/**
 * A sandbox disk's filesystem outlives our unmount while another mount namespace holds a copy of its mount (as runc
 * init or CRIU restore of another sandbox do for a moment, here {@code unshare -m sleep}): {@link SandboxDisks} waits
 * until it is really gone (written clean, loop device detached) before it returns, fails clearly when the copy stays,
 * and never mounts an image whose previous loop device is still bound. On this host, as root.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class LoopReleaseHostTest {

    private static final Duration SHORT = Duration.ofMillis(200);
    private static final LoopBinding.Bounds SHORT_BOUNDS = new LoopBinding.Bounds(SHORT, SHORT);

    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private Path dir;
    private SandboxDirs dirs;
    private SandboxDisks disks;
    private Process holder;
    private Process opener;

    @BeforeEach
    void newDisk() throws Exception {
        Optional<String> unready = "root".equals(System.getProperty("user.name"))
                ? SandboxDisks.unavailableReason()
                : Optional.of("not root");
        HostFixture.requireHost(unready);
        dir = Files.createTempDirectory(Path.of("/var/tmp"), "aenv-loop-release-test-");
        JdkProcessRunner runner = new JdkProcessRunner();
        disks = new SandboxDisks(
                runner,
                new SpareDisks(
                        (image, size) -> SandboxDisks.format(runner, image, size, true), dir.resolve("spares"), 0));
        dirs = new SandboxDirs(dir.resolve("sandbox"));
        disks.create(dirs, SandboxDisks.MIN_MIB);
        Files.writeString(dirs.upper().resolve("kept"), "on the disk");
    }

    @AfterEach
    void cleanUp() throws Exception {
        threads.shutdownNow();
        releaseHolder();
        if (dir == null) {
            return;
        }
        for (Path mount : MountTable.mountsUnder(dir)) {
            Unmounts.unmount(mount);
        }
        BackendFixture.awaitNoLoopDevicesUnder(dir);
        HostFixture.deleteTree(dir);
    }

    @Test
    void the_unmount_returns_once_a_copy_in_another_namespace_is_gone_with_the_disk_clean() throws Exception {
        holdACopyOfTheMounts();

        CompletableFuture<Void> unmounting = CompletableFuture.runAsync(
                () -> {
                    try {
                        disks.unmount(dirs);
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                },
                threads);
        HostFixture.await("our mount of the disk is gone", Duration.ofSeconds(10), () -> !isMountPoint(dirs.disk()));

        assertThat(unmounting)
                .as("the unmount waits while the filesystem lives on in the other namespace")
                .isNotDone();
        assertThat(LoopDevices.backedUnder(dir))
                .as("its loop device is still bound")
                .hasSize(1);
        assertThat(state(dirs.diskImage()))
                .as("and the filesystem is not written clean yet")
                .isEqualTo("not clean");

        releaseHolder();
        unmounting.get(SandboxDisks.RELEASE_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(LoopDevices.backedUnder(dir))
                .as("no loop device once the unmount returned")
                .isEmpty();
        assertThat(state(dirs.diskImage())).isEqualTo("clean");
    }

    @Test
    void an_unmount_whose_filesystem_lives_on_fails_naming_the_loop_image_not_remounted() throws Exception {
        holdACopyOfTheMounts();

        assertThatThrownBy(() -> SandboxDisks.unmount(dirs, SHORT_BOUNDS))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith("loop")
                .hasMessageContaining(" is still bound to " + dirs.diskImage())
                .hasMessageContaining("another mount namespace")
                .hasMessageContaining("held by: " + holder.pid() + " sleep");
        assertThat(isMountPoint(dirs.disk())).isFalse();
        assertThatThrownBy(() -> SandboxDisks.mount(dirs, SHORT_BOUNDS))
                .as("a second loop device on a live image")
                .isInstanceOf(IOException.class)
                .hasMessageContaining("still bound to " + dirs.diskImage());
        assertThat(LoopDevices.backedUnder(dir))
                .as("no second loop device was bound")
                .hasSize(1);
        assertThat(isMountPoint(dirs.disk())).isFalse();

        releaseHolder();
        disks.mount(dirs);
        assertThat(Files.readString(dirs.upper().resolve("kept"))).isEqualTo("on the disk");
        disks.unmount(dirs);
        assertThat(LoopDevices.backedUnder(dir)).isEmpty();
        assertThat(state(dirs.diskImage())).isEqualTo("clean");
    }

    @Test
    void a_copy_held_from_outside_keeps_the_unmount_waiting_past_its_quiet_bound() throws Exception {
        holdACopyOfTheMountsOpenOnly();
        LoopBinding.Bounds bounds = new LoopBinding.Bounds(SHORT, Duration.ofSeconds(60));
        // when the unmount began on its thread (not when it was submitted): the wait it reports counts from there
        AtomicLong started = new AtomicLong();
        AtomicBoolean began = new AtomicBoolean();
        CompletableFuture<Long> unmounting = CompletableFuture.supplyAsync(
                () -> {
                    try {
                        started.set(System.nanoTime());
                        began.set(true);
                        return SandboxDisks.unmount(dirs, bounds);
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                },
                threads);
        Duration outlived = SHORT.multipliedBy(15); // a look for holders on a busy host can take most of a second
        HostFixture.await(
                "the unmount answered or outlived its quiet bound 15 times",
                Duration.ofSeconds(20),
                () -> unmounting.isDone() || (began.get() && System.nanoTime() - started.get() > outlived.toNanos()));

        assertThat(unmounting)
                .as("as with CRIU restoring another sandbox: no process in the copy's namespace, one"
                        + " holding it open; the unmount waits for it")
                .isNotDone();
        assertThat(state(dirs.diskImage())).isEqualTo("not clean");
        releaseHolder();
        // released 15 quiet bounds after the call began; the wait it reports starts after its umount, a little later
        assertThat(unmounting.get(SandboxDisks.RELEASE_TIMEOUT.toSeconds(), TimeUnit.SECONDS))
                .isGreaterThan(SHORT.multipliedBy(10).toMillis());
        assertThat(LoopDevices.backedUnder(dir))
                .as("no loop device once the unmount returned")
                .isEmpty();
        assertThat(state(dirs.diskImage())).isEqualTo("clean");
    }

    @Test
    void a_copy_held_open_past_the_longer_bound_fails_naming_the_process_holding_it() throws Exception {
        holdACopyOfTheMountsOpenOnly();

        assertThatThrownBy(() -> SandboxDisks.unmount(dirs, new LoopBinding.Bounds(SHORT, SHORT.multipliedBy(3))))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(" is still bound to " + dirs.diskImage())
                .hasMessageContaining("held by: ")
                // among the namespaces held open without a process in them (a host daemon such as LXCFS keeps one too)
                .hasMessageContaining(opener.pid() + " sleep (mount namespace mnt:[")
                .hasMessageContaining("held open as fd 3)");
        releaseHolder();
        disks.mount(dirs);
        assertThat(Files.readString(dirs.upper().resolve("kept"))).isEqualTo("on the disk");
    }

    @Test
    void an_unmount_without_another_copy_returns_with_the_disk_clean_and_its_loop_gone() throws Exception {
        disks.unmount(dirs);

        assertThat(LoopDevices.backedUnder(dir)).isEmpty();
        assertThat(state(dirs.diskImage())).isEqualTo("clean");
        disks.unmount(dirs); // nothing mounted: nothing to do
    }

    /** Starts {@code unshare -m sleep}: a process in a new mount namespace, which holds a copy of the host's mounts. */
    private void holdACopyOfTheMounts() throws IOException {
        holder = new ProcessBuilder("unshare", "-m", "sleep", "600")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        Path self = Path.of("/proc/self/ns/mnt");
        Path theirs = Path.of("/proc", Long.toString(holder.pid()), "ns/mnt");
        HostFixture.await("the holder runs sleep in a mount namespace of its own", Duration.ofSeconds(10), () -> {
            try {
                return Files.readString(Path.of("/proc", Long.toString(holder.pid()), "comm"))
                                .strip()
                                .equals("sleep")
                        && !Files.readSymbolicLink(theirs).equals(Files.readSymbolicLink(self));
            } catch (IOException notYet) {
                return false;
            }
        });
        assertThat(holder.isAlive()).isTrue();
    }

    /**
     * What CRIU restoring another sandbox does: a mount namespace with a copy of the host's mounts that no process is
     * in, held open by a process outside it ({@code sleep} with the namespace as its descriptor 3).
     */
    private void holdACopyOfTheMountsOpenOnly() throws IOException, InterruptedException {
        holdACopyOfTheMounts();
        opener = new ProcessBuilder("sh", "-c", "exec 3</proc/" + holder.pid() + "/ns/mnt && exec sleep 600")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        Path proc = Path.of("/proc", Long.toString(opener.pid()));
        HostFixture.await("the opener runs sleep holding the namespace as descriptor 3", Duration.ofSeconds(10), () -> {
            try {
                return Files.readString(proc.resolve("comm")).strip().equals("sleep")
                        && Files.readSymbolicLink(proc.resolve("fd/3"))
                                .toString()
                                .startsWith("mnt:[");
            } catch (IOException notYet) {
                return false;
            }
        });
        holder.destroyForcibly();
        holder.waitFor();
    }

    private void releaseHolder() throws InterruptedException {
        for (Process process : new Process[] {holder, opener}) {
            if (process != null) {
                process.destroyForcibly();
                process.waitFor();
            }
        }
        holder = null;
        opener = null;
    }

    private static boolean isMountPoint(Path path) {
        try {
            return MountTable.isMountPoint(path);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The image's "Filesystem state" from {@code dumpe2fs -h}. */
    private static String state(Path image) throws Exception {
        String header = new JdkProcessRunner()
                .run(Command.of(Duration.ofSeconds(30), "dumpe2fs", "-h", image.toString()))
                .stdout();
        return header.lines()
                .filter(line -> line.startsWith("Filesystem state:"))
                .map(line -> line.substring("Filesystem state:".length()).strip())
                .findFirst()
                .orElseThrow();
    }
}
