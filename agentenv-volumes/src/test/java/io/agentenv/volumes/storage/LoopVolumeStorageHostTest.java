package io.agentenv.volumes.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.fail;

import io.agentenv.volumes.VolumeException;
import io.agentenv.volumes.content.GuestOwner;
import io.agentenv.volumes.content.VolumeFiles;
import io.agentenv.volumes.content.VolumePath;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real loop-mounted volumes: needs root, loop devices and mkfs.ext4; skipped otherwise (failed when
 * AENV_REQUIRE_HOST_TESTS=1).
 */
@Tag("host")
class LoopVolumeStorageHostTest {
    private static final int OWNER = 1_000_001_000;
    private static final String ID = "hosttestvolume000001";

    @TempDir
    Path dir;

    private LoopVolumeStorage storage;

    @BeforeEach
    void requireHost() {
        LoopVolumeStorage.hostUnavailableReason().ifPresent(reason -> {
            if ("1".equals(System.getenv("AENV_REQUIRE_HOST_TESTS"))) {
                fail("host tests are required but " + reason);
            }
            Assumptions.abort("host test skipped: " + reason);
        });
        storage = new LoopVolumeStorage(dir.resolve("volumes"), OWNER, OWNER);
    }

    @AfterEach
    void cleanUp() throws IOException {
        if (storage != null) {
            storage.delete(ID); // a failed test leaves no mount behind
        }
    }

    @Test
    void createMountsAnEmptyVolumeOwnedByTheGuestUser() throws IOException {
        Path content = storage.create(ID, 16);
        assertThat(MountTable.isMountPoint(content)).isTrue();
        try (var entries = Files.list(content)) {
            assertThat(entries).isEmpty();
        }
        assertThat(Files.getAttribute(content, "unix:uid", LinkOption.NOFOLLOW_LINKS))
                .isEqualTo(OWNER);
        assertThat(Files.getAttribute(content, "unix:gid", LinkOption.NOFOLLOW_LINKS))
                .isEqualTo(OWNER);
        Path image = dir.resolve("volumes").resolve(ID).resolve("volume.img");
        assertThat(Files.size(image)).isEqualTo(16L << 20);
        VolumeStorage.Usage usage = storage.usage(ID);
        assertThat(usage.totalBytes()).isBetween(8L << 20, 16L << 20);
        assertThat(usage.usedBytes()).isLessThan(usage.totalBytes());
    }

    @Test
    void writePastTheSizeFailsWithNoSpaceAndKeepsTheVolumeUsable() throws IOException {
        Path content = storage.create(ID, 8);
        VolumeFiles files = new VolumeFiles(content, new GuestOwner(1_000_000_000, 1000, true));
        InputStream tooMuch = new InputStream() {
            private long left = 32L << 20;

            @Override
            public int read() {
                return left-- > 0 ? 'x' : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (left <= 0) {
                    return -1;
                }
                int n = (int) Math.min(len, left);
                java.util.Arrays.fill(b, off, off + n, (byte) 'x');
                left -= n;
                return n;
            }
        };
        assertThatThrownBy(() -> files.write(VolumePath.parse("/big"), tooMuch, VolumeFiles.Metadata.NONE))
                .isInstanceOf(VolumeException.class)
                .extracting(e -> ((VolumeException) e).kind())
                .isEqualTo(VolumeException.Kind.NO_SPACE);
        try (var entries = Files.list(content)) {
            assertThat(entries).isEmpty(); // the partial temporary file is gone
        }
        var stat = files.write(
                VolumePath.parse("/small"),
                new java.io.ByteArrayInputStream("ok".getBytes(StandardCharsets.UTF_8)),
                VolumeFiles.Metadata.NONE);
        assertThat(stat.uid()).isEqualTo(1000);
        assertThat(Files.getAttribute(content.resolve("small"), "unix:uid")).isEqualTo(OWNER);
    }

    @Test
    void deleteLeavesNoMountNoLoopDeviceAndNoFiles() throws IOException {
        Path content = storage.create(ID, 16);
        Path image = dir.resolve("volumes").resolve(ID).resolve("volume.img").toAbsolutePath();
        assertThat(loopDevicesOf(image)).isNotEmpty();
        storage.delete(ID);
        assertThat(MountTable.isMountPoint(content)).isFalse();
        assertThat(dir.resolve("volumes").resolve(ID)).doesNotExist();
        assertThat(loopDevicesOf(image)).isEmpty();
        storage.delete(ID); // again: nothing to do
    }

    @Test
    void mountAllMountsAnUnmountedVolumeAgainWithItsContent() throws IOException {
        Path content = storage.create(ID, 16);
        Files.writeString(content.resolve("kept"), "kept");
        HostCommands.run(java.util.List.of("umount", content.toString()));
        assertThat(MountTable.isMountPoint(content)).isFalse();
        storage.mountAll(Map.of(ID, 16));
        assertThat(MountTable.isMountPoint(content)).isTrue();
        assertThat(content.resolve("kept")).hasContent("kept");
        storage.mountAll(Map.of(ID, 16)); // mounted already: nothing to do
    }

    @Test
    void aVolumeNotMountedByThisStorageHasNoContent() throws IOException {
        storage.create(ID, 16);
        LoopVolumeStorage restarted = new LoopVolumeStorage(dir.resolve("volumes"), OWNER, OWNER);
        assertThatThrownBy(() -> restarted.content(ID))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not mounted");
        restarted.mountAll(Map.of(ID, 16)); // mounted already: taken as it is
        assertThat(restarted.content(ID)).isEqualTo(storage.content(ID));
    }

    @Test
    void deleteOfAVolumeInUseFailsAndKeepsItWhole() throws IOException {
        Path content = storage.create(ID, 16);
        Files.writeString(content.resolve("kept"), "kept");
        try (var open = java.nio.channels.FileChannel.open(content.resolve("kept"))) { // keeps the volume busy
            assertThatThrownBy(() -> storage.delete(ID))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("busy");
            assertThat(open.size()).isEqualTo(4);
        }
        assertThat(MountTable.isMountPoint(content)).isTrue();
        assertThat(storage.content(ID)).isEqualTo(content);
        assertThat(content.resolve("kept")).hasContent("kept");
    }

    /** The loop devices backed by {@code image} ({@code losetup -j}). */
    private static String loopDevicesOf(Path image) throws IOException {
        return HostCommands.run(java.util.List.of("losetup", "-j", image.toString()));
    }
}
