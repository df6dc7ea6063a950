package io.agentenv.backend.container.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.BackendFixture;
import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.host.JdkProcessRunner;
import io.agentenv.backend.container.host.MountTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** {@link Mounts}: the system calls that replaced the {@code mount} processes, on this host (root). */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class MountsHostTest {

    private Path dir;

    @BeforeEach
    void scratch() throws IOException {
        Optional<String> unready = "root".equals(System.getProperty("user.name"))
                ? SandboxDisks.unavailableReason()
                : Optional.of("not root");
        HostFixture.requireHost(unready);
        dir = Files.createTempDirectory(Path.of("/var/tmp"), "aenv-mounts-test-");
    }

    @AfterEach
    void cleanUp() throws IOException {
        if (dir == null) {
            return;
        }
        for (Path mount : MountTable.mountsUnder(dir)) {
            Unmounts.unmount(mount);
        }
        HostFixture.deleteTree(dir);
    }

    private Path image() throws Exception {
        Path image = dir.resolve("disk.img");
        SandboxDisks.format(new JdkProcessRunner(), image, SandboxDisks.MIN_MIB, false);
        return image;
    }

    @Test
    void an_image_is_mounted_through_a_loop_device_that_clears_itself_after_the_unmount() throws Exception {
        Path image = image();
        Path target = Files.createDirectories(dir.resolve("disk"));

        Mounts.loopExt4(image, target, "noinit_itable,discard");

        assertThat(MountTable.isMountPoint(target)).isTrue();
        assertThat(LoopDevices.backedUnder(dir))
                .singleElement()
                .satisfies(loop -> assertThat(loop.backingFile()).isEqualTo(image.toString()));
        Files.writeString(target.resolve("written"), "on the disk");
        assertThat(Unmounts.unmount(target)).isTrue();
        BackendFixture.awaitNoLoopDevicesUnder(dir);
        Mounts.loopExt4(image, target, "noinit_itable,discard"); // the file is on the image, not in the directory
        assertThat(Files.readString(target.resolve("written"))).isEqualTo("on the disk");
        Unmounts.unmount(target);
        BackendFixture.awaitNoLoopDevicesUnder(dir);
    }

    @Test
    void a_mount_that_fails_after_its_loop_device_was_bound_leaves_no_loop_device() throws Exception {
        Path image = image();

        assertThatThrownBy(() -> Mounts.loopExt4(image, dir.resolve("no-such-dir"), "noinit_itable,discard"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("mount(/dev/loop")
                .hasMessageContaining("ENOENT");
        BackendFixture.awaitNoLoopDevicesUnder(dir);
    }

    @Test
    void an_overlay_shows_its_lower_layer_and_writes_to_its_upper_dir() throws Exception {
        Path lower = Files.createDirectories(dir.resolve("lower"));
        Files.writeString(lower.resolve("from-lower"), "template");
        Path upper = Files.createDirectories(dir.resolve("upper"));
        Path work = Files.createDirectories(dir.resolve("work"));
        Path target = Files.createDirectories(dir.resolve("rootfs"));

        Mounts.overlay("lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work, target);

        assertThat(Files.readString(target.resolve("from-lower"))).isEqualTo("template");
        Files.writeString(target.resolve("new"), "sandbox");
        assertThat(upper.resolve("new")).hasContent("sandbox");
        assertThat(Unmounts.unmount(target)).isTrue();
        assertThat(MountTable.isMountPoint(target)).isFalse();
    }

    @Test
    void a_refused_overlay_names_the_call_and_the_errno() throws Exception {
        Path target = Files.createDirectories(dir.resolve("rootfs"));

        assertThatThrownBy(() -> Mounts.overlay("lowerdir=" + dir.resolve("missing"), target))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("mount(overlay, " + target + ", overlay)")
                .hasMessageContaining("errno");
    }
}
