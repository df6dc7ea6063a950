package io.agentenv.volumes.content;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.volumes.VolumeException;
import io.agentenv.volumes.content.VolumeFiles.Metadata;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A process with write access to the volume (a sandbox that mounts it) swaps a directory for a symbolic link to a host
 * directory over and over while the content API works below it: no operation may ever reach the host directory.
 * Resolving each path with separate checks and a later use by path loses this race within a few thousand tries.
 */
class VolumeFilesRaceTest {
    private static final long RACE_NANOS = 1_500_000_000L;

    @TempDir
    Path dir;

    private Path root;
    private Path outside;
    private VolumeFiles files;
    private final AtomicBoolean stop = new AtomicBoolean();
    private Thread swapper;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createDirectory(dir.resolve("root"));
        outside = Files.createDirectory(dir.resolve("outside"));
        Files.writeString(outside.resolve("secret"), "secret");
        Files.createDirectory(outside.resolve("sub"));
        Files.createDirectory(root.resolve("real"));
        Files.writeString(root.resolve("real/secret"), "inside");
        Files.createDirectory(root.resolve("real/sub"));
        files = new VolumeFiles(root, new GuestOwner(0, 1000, false));
        swapper = Thread.ofPlatform().start(this::swapForever);
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        stop.set(true);
        swapper.join();
    }

    /** {@code /d} is the real directory for a moment, then a link to the host directory, then gone, and again. */
    private void swapForever() {
        Path d = root.resolve("d");
        Path real = root.resolve("real");
        while (!stop.get()) {
            try {
                Files.move(real, d);
                Files.move(d, real);
                Files.createSymbolicLink(d, outside);
                Files.delete(d);
            } catch (IOException e) {
                restore(d, real); // an operation under test made or moved something at d in between
            }
        }
    }

    private static void restore(Path d, Path real) {
        try {
            if (Files.isSymbolicLink(d)) {
                Files.delete(d);
            } else if (Files.isDirectory(d) && !Files.exists(real)) {
                Files.move(d, real);
            } else if (Files.isDirectory(d)) {
                io.agentenv.volumes.FileTrees.deleteTree(d);
            }
        } catch (IOException ignored) {
            // changed again meanwhile: the next round tries again
        }
    }

    @Test
    void swappedParentNeverRedirectsWritesReadsOrRemoves() throws IOException {
        AtomicInteger succeeded = new AtomicInteger();
        long end = System.nanoTime() + RACE_NANOS;
        int round = 0;
        while (System.nanoTime() < end) {
            round++;
            int slot = round % 8;
            attempt(succeeded, () -> files.write(VolumePath.parse("/d/planted" + slot), text(), Metadata.NONE));
            attempt(succeeded, () -> files.makeDir(VolumePath.parse("/d/made"), true, Metadata.NONE));
            attempt(succeeded, () -> {
                VolumeFiles.OpenFile file = files.read(VolumePath.parse("/d/secret"));
                try (var channel = file.channel()) {
                    var buffer = java.nio.ByteBuffer.allocate(16);
                    channel.read(buffer);
                    assertThat(new String(buffer.array(), 0, buffer.position(), StandardCharsets.UTF_8))
                            .isEqualTo("inside");
                }
                return null;
            });
            attempt(
                    succeeded,
                    () -> files.update(
                            VolumePath.parse("/d/secret"),
                            new Metadata(
                                    java.util.OptionalInt.empty(),
                                    java.util.OptionalInt.empty(),
                                    java.util.OptionalInt.of(0600))));
            attempt(succeeded, () -> {
                files.remove(VolumePath.parse("/d/sub"));
                return null;
            });
            attempt(succeeded, () -> files.rename(VolumePath.parse("/d/secret"), VolumePath.parse("/d/moved"), false));
            attempt(succeeded, () -> files.rename(VolumePath.parse("/d/moved"), VolumePath.parse("/d/secret"), false));
        }
        stop.set(true);
        try (var entries = Files.list(outside)) {
            assertThat(entries.map(e -> e.getFileName().toString())).containsExactlyInAnyOrder("secret", "sub");
        }
        assertThat(outside.resolve("secret")).hasContent("secret");
        assertThat(Files.getPosixFilePermissions(outside.resolve("secret")))
                .isEqualTo(java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        assertThat(succeeded.get())
                .as("operations that found the real directory")
                .isPositive();
    }

    @FunctionalInterface
    private interface Operation {
        Object run() throws IOException;
    }

    private static void attempt(AtomicInteger succeeded, Operation operation) throws IOException {
        try {
            operation.run();
            succeeded.incrementAndGet();
        } catch (VolumeException e) {
            // the path was a link, missing or changed meanwhile: refused, which is what a race may cause
        }
    }

    private static ByteArrayInputStream text() {
        return new ByteArrayInputStream("planted".getBytes(StandardCharsets.UTF_8));
    }
}
