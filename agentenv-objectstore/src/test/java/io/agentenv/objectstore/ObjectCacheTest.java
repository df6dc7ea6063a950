package io.agentenv.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ObjectCacheTest {

    private static final int SIZE = 10_000;

    @TempDir
    Path scratch;

    private CountingStore store;
    private Path cacheDir;

    @BeforeEach
    void open() throws Exception {
        store = new CountingStore(new FileSystemObjectStore(Files.createDirectory(scratch.resolve("store"))));
        cacheDir = scratch.resolve("cache");
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    /**
     * {@code threads} acquisitions of one digest on {@code pool}, with the store's reads held until every thread has
     * started, so the first fetch is still running when the others ask.
     */
    private List<Future<ObjectCache.Lease>> acquireTogether(
            ObjectCache cache, ObjectKey key, String digest, int threads, ExecutorService pool)
            throws InterruptedException {
        CountDownLatch asking = new CountDownLatch(threads);
        store.holdReads();
        List<Future<ObjectCache.Lease>> leases = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            leases.add(pool.submit(() -> {
                asking.countDown();
                return cache.acquire(key, digest);
            }));
        }
        asking.await();
        store.releaseReads();
        return leases;
    }

    private ObjectInfo put(String key, long seed) throws Exception {
        return store.put(ObjectKey.of(key), TestContent.writer(seed, SIZE));
    }

    @Test
    void manyThreadsAskingForOneObjectCauseOneDownload() throws Exception {
        ObjectInfo info = put("templates/base/rootfs.tar", 1);
        ObjectCache cache = new ObjectCache(cacheDir, 1L << 30, store);

        try (ExecutorService pool = Executors.newFixedThreadPool(12)) {
            for (Future<ObjectCache.Lease> lease : acquireTogether(cache, info.key(), info.sha256(), 12, pool)) {
                try (ObjectCache.Lease l = lease.get()) {
                    assertThat(l.sha256()).isEqualTo(info.sha256());
                    assertThat(TestContent.sha256(l.path())).isEqualTo(info.sha256());
                }
            }
        }
        assertThat(store.reads).hasValue(1);
        assertThat(cache.digests()).containsExactly(info.sha256());
    }

    @Test
    void twoKeysWithTheSameContentShareOneCopy() throws Exception {
        ObjectInfo a = put("a", 2);
        ObjectInfo b = put("b", 2);
        ObjectCache cache = new ObjectCache(cacheDir, 1L << 30, store);

        try (ObjectCache.Lease first = cache.acquire(a.key());
                ObjectCache.Lease second = cache.acquire(b.key())) {
            assertThat(second.path()).isEqualTo(first.path());
            assertThat(first.path().getFileName()).hasToString(a.sha256());
            assertThat(Files.getPosixFilePermissions(first.path()))
                    .isEqualTo(PosixFilePermissions.fromString("r--r--r--"));
        }
        assertThat(store.reads).hasValue(1);
        assertThat(cache.sizeBytes()).isEqualTo(SIZE);
    }

    @Test
    void theLeastRecentlyUsedCopiesAreRemovedBeyondTheBound() throws Exception {
        ObjectInfo a = put("a", 3);
        ObjectInfo b = put("b", 4);
        ObjectInfo c = put("c", 5);
        ObjectInfo d = put("d", 6);
        ObjectCache cache = new ObjectCache(cacheDir, 3L * SIZE, store);
        for (ObjectInfo info : List.of(a, b, c)) {
            cache.acquire(info.key()).close();
        }
        cache.acquire(a.key()).close(); // a is now the most recently used

        cache.acquire(d.key()).close();

        assertThat(cache.digests()).containsExactly(c.sha256(), a.sha256(), d.sha256());
        assertThat(cache.sizeBytes()).isEqualTo(3L * SIZE);
        assertThat(TestContent.names(cacheDir.resolve("objects")))
                .containsExactlyInAnyOrder(a.sha256(), c.sha256(), d.sha256());
        assertThat(TestContent.names(cacheDir.resolve("tmp"))).isEmpty();
        assertThat(store.reads).hasValue(4);
        cache.acquire(b.key()).close(); // fetched again
        assertThat(store.reads).hasValue(5);
    }

    @Test
    void aCopyInUseIsNotRemovedUntilReleased() throws Exception {
        ObjectInfo a = put("a", 7);
        ObjectInfo b = put("b", 8);
        ObjectCache cache = new ObjectCache(cacheDir, SIZE, store);

        ObjectCache.Lease held = cache.acquire(a.key());
        try (ObjectCache.Lease other = cache.acquire(b.key())) {
            assertThat(cache.sizeBytes()).isEqualTo(2L * SIZE); // over the bound while both are in use
            assertThat(held.path()).exists();
            assertThat(other.path()).exists();
        }
        assertThat(cache.digests()).containsExactly(a.sha256()); // b, released, made room; a is held
        held.close();
        held.close(); // a second release does nothing
        assertThat(cache.digests()).containsExactly(a.sha256());
        assertThat(cache.sizeBytes()).isEqualTo(SIZE);
    }

    @Test
    void anObjectLargerThanTheBoundIsServedThenRemoved() throws Exception {
        ObjectInfo a = put("a", 9);
        ObjectCache cache = new ObjectCache(cacheDir, SIZE - 1, store);

        try (ObjectCache.Lease lease = cache.acquire(a.key())) {
            assertThat(TestContent.sha256(lease.path())).isEqualTo(a.sha256());
        }

        assertThat(cache.digests()).isEmpty();
        assertThat(TestContent.names(cacheDir.resolve("objects"))).isEmpty();
    }

    @Test
    void copiesSurviveARestartAndAreCheckedOnFirstUse() throws Exception {
        ObjectInfo a = put("a", 10);
        ObjectInfo b = put("b", 11);
        ObjectCache first = new ObjectCache(cacheDir, 1L << 30, store);
        first.acquire(a.key()).close();
        first.acquire(b.key()).close();
        Path damaged = cacheDir.resolve("objects").resolve(b.sha256());
        Files.setPosixFilePermissions(damaged, PosixFilePermissions.fromString("rw-r--r--"));
        Bytes.flipBit(damaged, 100);

        ObjectCache second = new ObjectCache(cacheDir, 1L << 30, store);
        assertThat(second.sizeBytes()).isEqualTo(2L * SIZE);
        try (ObjectCache.Lease intact = second.acquire(a.key(), a.sha256());
                ObjectCache.Lease refetched = second.acquire(b.key(), b.sha256())) {
            assertThat(TestContent.sha256(intact.path())).isEqualTo(a.sha256());
            assertThat(TestContent.sha256(refetched.path())).isEqualTo(b.sha256());
        }
        assertThat(store.reads).hasValue(3); // a and b once, then the damaged b again
    }

    @Test
    void aDigestTheObjectDoesNotHaveIsRefused() throws Exception {
        ObjectInfo a = put("a", 12);
        ObjectCache cache = new ObjectCache(cacheDir, 1L << 30, store);
        String other = TestContent.sha256(new byte[] {1});

        assertThatThrownBy(() -> cache.acquire(a.key(), other))
                .isInstanceOf(ObjectStoreException.Failed.class)
                .hasMessageContaining("not the " + other);
        assertThat(cache.digests()).isEmpty();
        assertThat(TestContent.names(cacheDir.resolve("tmp"))).isEmpty();
    }

    @Test
    void waitersShareTheFetchersFailure() throws Exception {
        ObjectCache cache = new ObjectCache(cacheDir, 1L << 30, store);
        ObjectKey missing = ObjectKey.of("missing");
        String digest = TestContent.sha256(new byte[] {2});
        int threads = 6;

        try (ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            for (Future<ObjectCache.Lease> attempt : acquireTogether(cache, missing, digest, threads, pool)) {
                assertThatThrownBy(attempt::get)
                        .isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(ObjectStoreException.NotFound.class);
            }
        }
        assertThat(store.reads.get()).isBetween(1, threads);
        assertThat(cache.digests()).isEmpty();
    }

    @Test
    void acquiringAMissingKeyIsNotFound() throws Exception {
        ObjectCache cache = new ObjectCache(cacheDir, 1L << 30, store);

        assertThatThrownBy(() -> cache.acquire(ObjectKey.of("nope"))).isInstanceOf(ObjectStoreException.NotFound.class);
        assertThat(store.reads).hasValue(0);
    }

    @Test
    void foreignFilesInTheCacheDirectoryAreRefused() throws Exception {
        Files.createDirectories(cacheDir.resolve("objects"));
        Files.writeString(cacheDir.resolve("objects/not-a-digest"), "x");

        assertThatThrownBy(() -> new ObjectCache(cacheDir, 1L << 30, store))
                .hasMessageContaining("not a cached object");
    }
}
