package io.agentenv.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sandbox state trees through a store: a sparse disk image stays sparse, whiteouts, {@code trusted.*} attributes,
 * owners, modes and links come back as they were. Needs root (devices, owners, trusted attributes); skipped otherwise
 * (failed when AENV_REQUIRE_HOST_TESTS=1).
 */
@Tag("host")
class TarTreesHostTest {
    private static final int GUEST_UID = 1_000_001_000;
    private static final long DISK_BYTES = 1L << 30;
    private static final long DATA_OFFSET = 512L << 20;

    @TempDir
    Path scratch;

    private ObjectStore store;
    private TarTrees trees;
    private Path source;

    @BeforeEach
    void open() throws Exception {
        if (!"root".equals(System.getProperty("user.name"))) {
            if ("1".equals(System.getenv("AENV_REQUIRE_HOST_TESTS"))) {
                fail("host tests are required but this is not root");
            }
            Assumptions.abort("host test skipped: not root");
        }
        store = new FileSystemObjectStore(Files.createDirectory(scratch.resolve("store")));
        trees = new TarTrees(store, scratch.resolve("spool"));
        source = Files.createDirectory(scratch.resolve("source"));
    }

    @Test
    void a_state_tree_comes_back_with_holes_whiteouts_attributes_and_owners() throws Exception {
        Path disk = source.resolve("disk.img");
        try (RandomAccessFile file = new RandomAccessFile(disk.toFile(), "rw")) {
            file.setLength(DISK_BYTES);
            file.seek(DATA_OFFSET);
            file.write("the sandbox's data".getBytes(StandardCharsets.UTF_8));
        }
        Path upper = Files.createDirectories(source.resolve("layers/0/etc"));
        run("mknod", upper.resolve("gone").toString(), "c", "0", "0");
        setTrustedAttribute(upper, "trusted.overlay.opaque", "y");
        Files.writeString(upper.resolve("owned"), "guest file");
        Files.setAttribute(upper.resolve("owned"), "unix:uid", GUEST_UID);
        Files.setAttribute(upper.resolve("owned"), "unix:mode", 04750); // setuid kept
        Files.createSymbolicLink(upper.resolve("escape"), Path.of("/etc/passwd"));

        ObjectInfo put = trees.put(ObjectKey.of("checkpoints", "sb1", "g1"), source);
        assertThat(put.size()).isLessThan(1L << 20); // the holes were not stored

        Path restored = scratch.resolve("elsewhere/sandboxes/sb1/g1");
        ObjectInfo got = trees.get(ObjectKey.of("checkpoints", "sb1", "g1"), restored);

        assertThat(got).isEqualTo(put);
        Path restoredDisk = restored.resolve("disk.img");
        assertThat(Files.size(restoredDisk)).isEqualTo(DISK_BYTES);
        assertThat(allocatedBytes(restoredDisk)).isLessThan(1L << 20);
        try (RandomAccessFile file = new RandomAccessFile(restoredDisk.toFile(), "r")) {
            byte[] data = new byte["the sandbox's data".length()];
            file.seek(DATA_OFFSET);
            file.readFully(data);
            assertThat(new String(data, StandardCharsets.UTF_8)).isEqualTo("the sandbox's data");
        }
        Path restoredUpper = restored.resolve("layers/0/etc");
        assertThat(run("stat", "-c", "%F %t %T", restoredUpper.resolve("gone").toString())
                        .strip())
                .isEqualTo("character special file 0 0");
        assertThat(trustedAttribute(restoredUpper, "trusted.overlay.opaque")).isEqualTo("y");
        assertThat(Files.getAttribute(restoredUpper.resolve("owned"), "unix:uid"))
                .isEqualTo(GUEST_UID);
        assertThat((int) Files.getAttribute(restoredUpper.resolve("owned"), "unix:mode") & 07777)
                .isEqualTo(04750);
        assertThat(Files.readSymbolicLink(restoredUpper.resolve("escape"))).isEqualTo(Path.of("/etc/passwd"));
        assertThat(leftovers()).isEmpty();
    }

    @Test
    void a_damaged_object_is_refused_before_anything_is_unpacked() throws Exception {
        Files.writeString(source.resolve("images"), "memory");
        trees.put(ObjectKey.of("snapshots", "s1"), source);
        try (Stream<Path> files = Files.walk(scratch.resolve("store"))) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                byte[] bytes = Files.readAllBytes(file);
                bytes[bytes.length - 1] ^= 1;
                Files.write(file, bytes);
            }
        }
        Path target = scratch.resolve("target/s1");

        assertThatThrownBy(() -> trees.get(ObjectKey.of("snapshots", "s1"), target))
                .isInstanceOf(ObjectStoreException.Corrupt.class);
        assertThat(target).doesNotExist();
        assertThat(leftovers()).isEmpty();
    }

    @Test
    void an_existing_target_and_a_missing_object_are_refused() throws Exception {
        Files.writeString(source.resolve("images"), "memory");
        trees.put(ObjectKey.of("snapshots", "s2"), source);

        assertThatThrownBy(() -> trees.get(ObjectKey.of("snapshots", "s2"), source))
                .isInstanceOf(ObjectStoreException.Failed.class)
                .hasMessageContaining("exists");
        assertThatThrownBy(() -> trees.get(ObjectKey.of("snapshots", "none"), scratch.resolve("x")))
                .isInstanceOf(ObjectStoreException.NotFound.class);
        assertThat(scratch.resolve("x")).doesNotExist();
        assertThat(leftovers()).isEmpty();
    }

    @Test
    void a_tree_larger_than_a_part_goes_through_s3_whose_two_passes_read_one_packing() throws Exception {
        Path disk = source.resolve("disk.img");
        try (RandomAccessFile file = new RandomAccessFile(disk.toFile(), "rw")) {
            file.setLength(DISK_BYTES); // a sparse member: tar names it after its pid
            file.seek(DATA_OFFSET);
            file.write(1);
        }
        Files.write(source.resolve("images"), new byte[(int) S3Settings.MIN_PART_SIZE + 4096]);
        try (S3ProxyServer server = S3ProxyServer.start();
                ObjectStore s3 = new S3ObjectStore(server.settings("trees")
                        .partSize(S3Settings.MIN_PART_SIZE)
                        .build())) {
            server.createBucket("trees");
            TarTrees overS3 = new TarTrees(s3, scratch.resolve("spool"));

            ObjectInfo put = overS3.put(ObjectKey.of("checkpoints", "sb2", "g1"), source);
            overS3.get(ObjectKey.of("checkpoints", "sb2", "g1"), scratch.resolve("fetched"));

            assertThat(put.size()).isGreaterThan(S3Settings.MIN_PART_SIZE);
            assertThat(Files.size(scratch.resolve("fetched/disk.img"))).isEqualTo(DISK_BYTES);
            assertThat(Files.mismatch(scratch.resolve("fetched/images"), source.resolve("images")))
                    .isEqualTo(-1);
        }
        assertThat(leftovers()).isEmpty();
    }

    /** Temporary archives and half-unpacked dirs anywhere under the scratch dir. */
    private List<Path> leftovers() throws IOException {
        try (Stream<Path> all = Files.walk(scratch)) {
            return all.filter(p -> {
                        String name = p.getFileName().toString();
                        return name.startsWith(".pack-") || name.startsWith(".unpack-");
                    })
                    .toList();
        }
    }

    private static long allocatedBytes(Path file) throws Exception {
        return Long.parseLong(run("du", "--block-size=1", file.toString()).split("\\s+")[0]);
    }

    private static void setTrustedAttribute(Path path, String name, String value) throws Exception {
        run(
                "python3",
                "-c",
                "import os,sys; os.setxattr(sys.argv[1], sys.argv[2], sys.argv[3].encode())",
                path.toString(),
                name,
                value);
    }

    private static String trustedAttribute(Path path, String name) throws Exception {
        return run(
                "python3",
                "-c",
                "import os,sys; print(os.getxattr(sys.argv[1], sys.argv[2]).decode(), end='')",
                path.toString(),
                name);
    }

    private static String run(String... command) throws Exception {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (process.waitFor() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + out);
        }
        return out;
    }
}
