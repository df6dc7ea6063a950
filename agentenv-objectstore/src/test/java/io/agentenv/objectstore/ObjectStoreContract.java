package io.agentenv.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every {@link ObjectStore} guarantees, run against each implementation (a subclass opens the store and knows
 * where it keeps an object's bytes, to damage them behind its back).
 */
public abstract class ObjectStoreContract {

    /** The size of the large object: more than one part at the smallest part size S3 allows. */
    protected static final long LARGE = 64L << 20;

    @TempDir
    protected Path scratch;

    protected ObjectStore store;

    /** A fresh, empty store for one test; closed after it. */
    protected abstract ObjectStore openStore() throws Exception;

    /** Flips one bit of byte {@code offset} of {@code key}'s stored content, without the store's knowledge. */
    protected abstract void damage(ObjectKey key, long offset) throws Exception;

    /**
     * Whether a read that races an overwrite of its key always gets the old or the new object. True for the
     * file-system store and for S3 itself; a server that replaces an object's bytes and metadata in two steps lets
     * such a read fail with {@link ObjectStoreException.Corrupt} instead (never with mixed bytes), which the test
     * then accepts.
     */
    protected boolean overwritesAreAtomic() {
        return true;
    }

    @BeforeEach
    void open() throws Exception {
        store = openStore();
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    @Test
    void putThenGetReturnsTheSameBytesAndDigest() throws Exception {
        byte[] content = TestContent.bytes(1, 100_000);
        Path source = Files.write(scratch.resolve("source"), content);
        ObjectKey key = ObjectKey.of("sandboxes/sbx-1/checkpoint/pages-1.img");

        ObjectInfo put = store.put(key, source);
        Path target = scratch.resolve("target");
        ObjectInfo got = store.get(key, target);

        assertThat(put).isEqualTo(new ObjectInfo(key, content.length, TestContent.sha256(content)));
        assertThat(got).isEqualTo(put);
        assertThat(Files.readAllBytes(target)).isEqualTo(content);
        assertThat(store.stat(key)).contains(put);
        assertThat(TestContent.names(scratch)).containsExactly("source", "target");
    }

    @Test
    void emptyObjectRoundTrips() throws Exception {
        ObjectKey key = ObjectKey.of("empty");
        ObjectInfo put = store.put(key, out -> {});

        assertThat(put.size()).isZero();
        assertThat(put.sha256()).isEqualTo(TestContent.sha256(new byte[0]));
        Path target = scratch.resolve("empty");
        assertThat(store.get(key, target)).isEqualTo(put);
        assertThat(Files.size(target)).isZero();
    }

    @Test
    void aWriterMayCloseWhatItWasGiven() throws Exception {
        ObjectKey key = ObjectKey.of("closed-by-writer");
        ObjectInfo put = store.put(key, out -> {
            try (out) {
                TestContent.write(14, 7_000_000, out);
            }
        });

        assertThat(put).isEqualTo(new ObjectInfo(key, 7_000_000, TestContent.sha256(14, 7_000_000)));
        long read = store.read(key, (in, info) -> in.transferTo(OutputStream.nullOutputStream()));
        assertThat(read).isEqualTo(7_000_000L);
    }

    @Test
    void putReplacesTheObjectAndGetReplacesTheTarget() throws Exception {
        ObjectKey key = ObjectKey.of("templates/base/meta.json");
        store.put(key, out -> out.write("first".getBytes(StandardCharsets.UTF_8)));
        ObjectInfo second = store.put(key, out -> out.write("second, longer".getBytes(StandardCharsets.UTF_8)));
        Path target = Files.writeString(scratch.resolve("meta.json"), "stale local copy");

        store.get(key, target);

        assertThat(Files.readString(target)).isEqualTo("second, longer");
        assertThat(store.stat(key)).contains(second);
        assertThat(store.list("templates/")).containsExactly(new ObjectEntry(key, second.size()));
    }

    @Test
    void missingObjectIsNotFoundEverywhere() throws Exception {
        ObjectKey key = ObjectKey.of("no/such/object");
        Path target = scratch.resolve("target");

        assertThatThrownBy(() -> store.get(key, target)).isInstanceOf(ObjectStoreException.NotFound.class);
        assertThatThrownBy(() -> store.read(key, (in, info) -> in.readAllBytes()))
                .isInstanceOf(ObjectStoreException.NotFound.class);
        assertThat(store.stat(key)).isEmpty();
        assertThat(store.delete(key)).isFalse();
        assertThat(target).doesNotExist();
        assertThat(TestContent.names(scratch)).isEmpty();
    }

    @Test
    void deleteRemovesTheObject() throws Exception {
        ObjectKey key = ObjectKey.of("snapshots/s1/tree.tar");
        ObjectKey sibling = ObjectKey.of("snapshots/s2/tree.tar");
        store.put(key, TestContent.writer(2, 1000));
        store.put(sibling, TestContent.writer(3, 1000));

        assertThat(store.delete(key)).isTrue();

        assertThat(store.stat(key)).isEmpty();
        assertThat(store.delete(key)).isFalse();
        assertThatThrownBy(() -> store.get(key, scratch.resolve("t")))
                .isInstanceOf(ObjectStoreException.NotFound.class);
        assertThat(store.list("snapshots/")).extracting(ObjectEntry::key).containsExactly(sibling);
        // the key can be written again after the delete
        store.put(key, TestContent.writer(4, 10));
        assertThat(store.stat(key)).map(ObjectInfo::size).contains(10L);
    }

    @Test
    void damagedBytesAreCorruptAndNothingReachesTheTarget() throws Exception {
        ObjectKey key = ObjectKey.of("checkpoints/sbx-9/pages.img");
        store.put(key, TestContent.writer(5, 50_000));
        damage(key, 12_345);
        Path target = Files.writeString(scratch.resolve("pages.img"), "the copy from before");

        assertThatThrownBy(() -> store.get(key, target))
                .isInstanceOf(ObjectStoreException.Corrupt.class)
                .hasMessageContaining(key.value());

        assertThat(Files.readString(target)).isEqualTo("the copy from before");
        assertThat(TestContent.names(scratch)).containsExactly("pages.img");
        assertThatThrownBy(() -> store.get(key, scratch.resolve("fresh")))
                .isInstanceOf(ObjectStoreException.Corrupt.class);
        assertThat(scratch.resolve("fresh")).doesNotExist();
    }

    @Test
    void damageIsFoundEvenWhenTheReaderStopsEarly() throws Exception {
        ObjectKey key = ObjectKey.of("partial-read");
        store.put(key, TestContent.writer(6, 200_000));
        damage(key, 150_000);

        assertThatThrownBy(() -> store.read(key, (in, info) -> in.readNBytes(10)))
                .isInstanceOf(ObjectStoreException.Corrupt.class);
    }

    @Test
    void readStreamsTheBytesAndReportsTheRecordedInfo() throws Exception {
        ObjectKey key = ObjectKey.of("streamed");
        ObjectInfo put = store.put(key, TestContent.writer(7, 300_000));
        List<ObjectInfo> seen = new ArrayList<>();

        byte[] first = store.read(key, (in, info) -> {
            seen.add(info);
            return in.readNBytes(1000);
        });

        assertThat(first).isEqualTo(Arrays.copyOf(TestContent.bytes(7, 1 << 20), 1000));
        assertThat(seen).containsExactly(put);
    }

    @Test
    void aReaderFailureIsFailedNotCorrupt() throws Exception {
        ObjectKey key = ObjectKey.of("reader-fails");
        store.put(key, TestContent.writer(8, 1000));

        assertThatThrownBy(() -> store.read(key, (in, info) -> {
                    in.readNBytes(10);
                    throw new IOException("disk full");
                }))
                .isInstanceOf(ObjectStoreException.Failed.class)
                .hasMessageContaining("disk full");
    }

    @Test
    void aFailingPutLeavesTheOldObject() throws Exception {
        ObjectKey key = ObjectKey.of("kept");
        ObjectInfo old = store.put(key, TestContent.writer(9, 1000));

        assertThatThrownBy(() -> store.put(key, out -> {
                    TestContent.write(10, 100_000, out);
                    throw new IOException("source vanished");
                }))
                .isInstanceOf(ObjectStoreException.Failed.class)
                .hasMessageContaining("source vanished");

        assertThat(store.stat(key)).contains(old);
        Path target = scratch.resolve("kept");
        store.get(key, target);
        assertThat(TestContent.sha256(target)).isEqualTo(old.sha256());
    }

    @Test
    void listReturnsEveryKeyUnderAPrefixAcrossPages() throws Exception {
        List<ObjectKey> many = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            ObjectKey key = ObjectKey.of("many/k" + String.format("%02d", i));
            store.put(key, TestContent.writer(i, i));
            many.add(key);
        }
        store.put(ObjectKey.of("many-not/x"), TestContent.writer(1, 1));
        store.put(ObjectKey.of("other/y"), TestContent.writer(1, 2));

        List<ObjectEntry> listed = store.list("many/");

        assertThat(listed).extracting(ObjectEntry::key).containsExactlyElementsOf(many);
        assertThat(listed)
                .extracting(ObjectEntry::size)
                .containsExactlyElementsOf(many.stream()
                        .map(k -> Long.parseLong(k.name().substring(1)))
                        .toList());
        assertThat(store.list("many/k1")).hasSize(10);
        assertThat(store.list("many")).hasSize(26);
        assertThat(store.list("")).hasSize(27);
        assertThat(store.list("nothing/")).isEmpty();
        assertThatThrownBy(() -> store.list("../")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.list("/many")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void largeObjectRoundTrips() throws Exception {
        ObjectKey key = ObjectKey.of("checkpoints/big/pages.img");
        String sha256 = TestContent.sha256(11, LARGE);

        ObjectInfo put = store.put(key, TestContent.writer(11, LARGE));
        Path target = scratch.resolve("pages.img");
        store.get(key, target);

        assertThat(put).isEqualTo(new ObjectInfo(key, LARGE, sha256));
        assertThat(Files.size(target)).isEqualTo(LARGE);
        assertThat(TestContent.sha256(target)).isEqualTo(sha256);
        assertThat(store.list("checkpoints/")).containsExactly(new ObjectEntry(key, LARGE));
    }

    @Test
    void concurrentPutsAndGetsSeeWholeObjects() throws Exception {
        int threads = 8;
        int rounds = 12;
        ObjectKey shared = ObjectKey.of("contended");
        Set<String> versions = ConcurrentHashMap.newKeySet();
        AtomicInteger corruptReads = new AtomicInteger();
        versions.add(store.put(shared, TestContent.writer(0, 40_000)).sha256());
        try (ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    for (int r = 0; r < rounds; r++) {
                        long seed = 1000L * thread + r;
                        ObjectKey own = ObjectKey.of("own", "t" + thread, "r" + r);
                        ObjectInfo info = store.put(own, TestContent.writer(seed, 5_000 + r));
                        Path copy = scratch.resolve("t" + thread + "-r" + r);
                        assertThat(store.get(own, copy)).isEqualTo(info);
                        assertThat(TestContent.sha256(copy)).isEqualTo(TestContent.sha256(seed, 5_000 + r));
                        if (thread % 2 == 0) {
                            // the digest is added before the put, so a reader never sees an unknown version
                            versions.add(TestContent.sha256(seed, 40_000));
                            store.put(shared, TestContent.writer(seed, 40_000));
                        } else {
                            Path read = scratch.resolve("shared-t" + thread + "-r" + r);
                            try {
                                ObjectInfo got = store.get(shared, read);
                                assertThat(versions).contains(got.sha256());
                                assertThat(TestContent.sha256(read)).isEqualTo(got.sha256());
                            } catch (ObjectStoreException.Corrupt mixed) {
                                corruptReads.incrementAndGet();
                                assertThat(read).doesNotExist();
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        }
        if (overwritesAreAtomic()) {
            assertThat(corruptReads).hasValue(0);
        }
        assertThat(store.list("own/")).hasSize(threads * rounds);
        assertThat(versions).contains(store.stat(shared).orElseThrow().sha256());
        assertThat(TestContent.names(scratch)).allMatch(name -> name.startsWith("t") || name.startsWith("shared"));
    }

    @Test
    void directoryTreesRoundTripWithModesAndLinks() throws Exception {
        Path tree = Files.createDirectory(scratch.resolve("tree"));
        Files.writeString(tree.resolve("hello.txt"), "hello");
        Files.write(tree.resolve("random.bin"), TestContent.bytes(12, 300_000));
        Path bin = Files.createDirectories(tree.resolve("usr/bin"));
        Path tool = Files.writeString(bin.resolve("tool"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(tool, PosixFilePermissions.fromString("rwxr-x---"));
        Files.createDirectories(tree.resolve("empty/dir"));
        Files.createFile(tree.resolve("empty-file"));
        Files.createSymbolicLink(tree.resolve("bin"), Path.of("usr/bin"));
        Files.createSymbolicLink(tree.resolve("dangling"), Path.of("/nowhere/at/all"));
        String longName = "n".repeat(150);
        Files.writeString(
                Files.createDirectories(tree.resolve("deep/" + "d".repeat(120))).resolve(longName), "long");
        Files.setPosixFilePermissions(tree.resolve("usr"), PosixFilePermissions.fromString("r-xr-xr-x"));
        Files.setLastModifiedTime(tree.resolve("hello.txt"), FileTime.from(Instant.parse("2024-01-02T03:04:05Z")));
        DirectoryArchives archives = new DirectoryArchives(store);
        ObjectKey key = ObjectKey.of("templates/t1/rootfs.tar");

        ObjectInfo put = archives.putTree(key, tree);
        Path restored = scratch.resolve("restored");
        ObjectInfo got = archives.getTree(key, restored);

        assertThat(got).isEqualTo(put);
        TreeAssertions.assertSameTree(tree, restored);
        assertThat(Files.readSymbolicLink(restored.resolve("bin"))).isEqualTo(Path.of("usr/bin"));
        assertThat(Files.getLastModifiedTime(restored.resolve("hello.txt")).toInstant())
                .isEqualTo(Instant.parse("2024-01-02T03:04:05Z"));
        assertThat(TestContent.names(scratch)).containsExactly("restored", "tree");
        Files.setPosixFilePermissions(tree.resolve("usr"), PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(restored.resolve("usr"), PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @Test
    void aDamagedTreeIsCorruptAndLeavesNoDirectory() throws Exception {
        Path tree = Files.createDirectory(scratch.resolve("tree"));
        Files.write(tree.resolve("data"), TestContent.bytes(13, 100_000));
        DirectoryArchives archives = new DirectoryArchives(store);
        ObjectKey key = ObjectKey.of("trees/damaged.tar");
        archives.putTree(key, tree);
        damage(key, 50_000);

        assertThatThrownBy(() -> archives.getTree(key, scratch.resolve("restored")))
                .isInstanceOf(ObjectStoreException.Corrupt.class);

        assertThat(TestContent.names(scratch)).containsExactly("tree");
    }
}
