package io.agentenv.backend.container.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.host.HostFixture;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The spare disk images ({@link SpareDisks}) with a fake format that writes a numbered sparse file instead of running
 * {@code mkfs.ext4}: the host side (a real mkfs, a mount of a taken image) is in SandboxDiskHostTest.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SpareDisksTest {

    private static final int SIZE = 1024;
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    private final AtomicInteger made = new AtomicInteger();
    private final List<SpareDisks> opened = new ArrayList<>();

    /** A sparse file of the size whose first bytes are its serial number. */
    private void numbered(Path image, int sizeMiB) throws IOException {
        try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
            file.setLength((long) sizeMiB << 20);
            file.writeInt(made.incrementAndGet());
        }
    }

    private SpareDisks spares(int perSize, SpareDisks.Format format) throws IOException {
        SpareDisks spares = new SpareDisks(format, dir.resolve("spare-disks"), perSize);
        opened.add(spares);
        spares.start(SIZE);
        return spares;
    }

    @AfterEach
    void close() throws Exception {
        for (SpareDisks spares : opened) {
            spares.close();
        }
    }

    private static int serial(Path image) throws IOException {
        try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "r")) {
            return file.readInt();
        }
    }

    @Test
    void the_default_size_fills_in_the_background_and_a_take_moves_an_image_to_the_target() throws Exception {
        SpareDisks spares = spares(3, this::numbered);
        HostFixture.await("three spares are ready", WAIT, () -> spares.ready(SIZE) == 3);

        Path target = dir.resolve("sandbox/disk.img");
        Files.createDirectories(target.getParent());
        assertThat(spares.take(SIZE, target)).isTrue();

        assertThat(Files.size(target)).isEqualTo((long) SIZE << 20);
        HostFixture.await("the taken spare is replaced", WAIT, () -> spares.ready(SIZE) == 3);
        assertThat(made.get()).isEqualTo(4);
    }

    @Test
    void concurrent_takes_never_get_the_same_image_and_the_pool_is_refilled_afterwards() throws Exception {
        SpareDisks spares = spares(8, this::numbered);
        HostFixture.await("eight spares are ready", WAIT, () -> spares.ready(SIZE) == 8);
        Files.createDirectories(dir.resolve("targets"));

        List<Future<Boolean>> takes = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 24; i++) {
                Path target = dir.resolve("targets/" + i + ".img");
                takes.add(threads.submit(() -> spares.take(SIZE, target)));
            }
        }

        Set<Integer> serials = new HashSet<>();
        int taken = 0;
        try (Stream<Path> targets = Files.list(dir.resolve("targets"))) {
            for (Path target : targets.toList()) {
                serials.add(serial(target));
                taken++;
            }
        }
        assertThat(takes.stream().filter(SpareDisksTest::succeeded).count()).isEqualTo(taken);
        assertThat(taken).as("at least the eight ready ones were handed out").isGreaterThanOrEqualTo(8);
        assertThat(serials).as("every taken image is a different one").hasSize(taken);
        HostFixture.await("the pool is refilled", WAIT, () -> spares.ready(SIZE) == 8);
    }

    @Test
    void a_miss_makes_nothing_for_the_caller_and_starts_keeping_that_size() throws Exception {
        SpareDisks spares = spares(2, this::numbered);
        Path target = dir.resolve("other.img");

        assertThat(spares.take(2048, target)).isFalse();

        assertThat(target).doesNotExist();
        HostFixture.await("the other size is kept too", WAIT, () -> spares.ready(2048) == 2 && spares.ready(SIZE) == 2);
        assertThat(spares.sizes()).containsExactlyInAnyOrder(SIZE, 2048);
        assertThat(spares.take(2048, target)).isTrue();
        assertThat(Files.size(target)).isEqualTo(2048L << 20);
    }

    @Test
    void concurrent_first_takes_of_new_sizes_never_keep_more_than_the_maximum_of_sizes() throws Exception {
        int takers = 8;
        for (int round = 0; round < 1000; round++) {
            SpareDisks spares =
                    new SpareDisks((image, sizeMiB) -> Files.createFile(image), dir.resolve("round-" + round), 1);
            spares.start(SIZE);
            CountDownLatch ready = new CountDownLatch(takers);
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int taker = 0; taker < takers; taker++) {
                int size = SIZE + 1 + taker;
                Path target = dir.resolve("taken-" + round + "-" + taker + ".img");
                threads.add(Thread.ofPlatform().start(() -> {
                    ready.countDown();
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    spares.take(size, target);
                }));
            }
            ready.await();
            go.countDown();
            for (Thread thread : threads) {
                thread.join();
            }
            List<Integer> sizes = spares.sizes();
            spares.close();

            assertThat(sizes)
                    .as("round %d", round)
                    .hasSize(SpareDisks.MAX_SIZES)
                    .contains(SIZE);
        }
    }

    @Test
    void with_none_kept_nothing_is_made_and_every_take_misses() throws Exception {
        SpareDisks spares = spares(0, this::numbered);

        assertThat(spares.take(SIZE, dir.resolve("a.img"))).isFalse();

        assertThat(spares.ready(SIZE)).isZero();
        assertThat(made.get()).isZero();
    }

    @Test
    void close_removes_every_image_and_later_takes_miss() throws Exception {
        SpareDisks spares = spares(3, this::numbered);
        HostFixture.await("three spares are ready", WAIT, () -> spares.ready(SIZE) == 3);

        spares.close();

        assertThat(dir.resolve("spare-disks")).doesNotExist();
        assertThat(spares.take(SIZE, dir.resolve("late.img"))).isFalse();
    }

    @Test
    void a_restart_keeps_complete_images_of_the_size_and_removes_partial_and_other_ones() throws Exception {
        Path sizeDir = Files.createDirectories(dir.resolve("spare-disks/" + SIZE));
        numbered(sizeDir.resolve("kept.img"), SIZE);
        numbered(sizeDir.resolve(".partial-crashed.img"), SIZE);
        numbered(sizeDir.resolve("truncated.img"), 1);
        Path otherSize = Files.createDirectories(dir.resolve("spare-disks/4096"));
        numbered(otherSize.resolve("old.img"), 1);
        made.set(100);

        SpareDisks spares = spares(1, this::numbered);

        assertThat(sizeDir.resolve(".partial-crashed.img")).doesNotExist();
        assertThat(sizeDir.resolve("truncated.img")).doesNotExist();
        assertThat(otherSize).doesNotExist();
        Path target = dir.resolve("taken.img");
        assertThat(spares.take(SIZE, target)).isTrue();
        assertThat(serial(target))
                .as("the complete image left by the previous run")
                .isEqualTo(1);
    }

    @Test
    void a_failing_format_is_not_retried_in_a_loop_and_leaves_no_partial_image() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        SpareDisks spares = spares(2, (image, size) -> {
            attempts.incrementAndGet();
            Files.writeString(image, "half");
            throw new IOException("no space left on the host");
        });
        HostFixture.await("the first attempt failed", WAIT, () -> attempts.get() == 1);

        assertThat(spares.take(SIZE, dir.resolve("a.img"))).isFalse();
        HostFixture.await("the take woke one more attempt", WAIT, () -> attempts.get() == 2);

        HostFixture.await("the failed attempts' files are removed", WAIT, () -> {
            try (Stream<Path> files = Files.list(dir.resolve("spare-disks/" + SIZE))) {
                return files.findAny().isEmpty();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(spares.ready(SIZE)).isZero();
        assertThat(attempts.get()).isEqualTo(2);
    }

    private static boolean succeeded(Future<Boolean> take) {
        try {
            return take.get();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
