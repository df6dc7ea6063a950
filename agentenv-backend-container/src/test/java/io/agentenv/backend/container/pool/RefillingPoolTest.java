package io.agentenv.backend.container.pool;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.host.HostFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RefillingPoolTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    /** Makes "key-N" items, records what it made and discarded; can fail or block on demand. */
    private static final class Counting implements RefillingPool.Items<String, String> {
        final AtomicInteger made = new AtomicInteger();
        final AtomicInteger tries = new AtomicInteger();
        final AtomicInteger inProgress = new AtomicInteger();
        final AtomicInteger maxInProgress = new AtomicInteger();
        final List<String> discarded = Collections.synchronizedList(new ArrayList<>());
        final AtomicBoolean failing = new AtomicBoolean();
        volatile CountDownLatch gate = new CountDownLatch(0);

        @Override
        public Optional<String> make(String key) throws InterruptedException {
            tries.incrementAndGet();
            int now = inProgress.incrementAndGet();
            maxInProgress.accumulateAndGet(now, Math::max);
            try {
                gate.await();
                if (failing.get()) {
                    return Optional.empty();
                }
                return Optional.of(key + "-" + made.incrementAndGet());
            } finally {
                inProgress.decrementAndGet();
            }
        }

        @Override
        public void discard(String item) {
            discarded.add(item);
        }
    }

    @Test
    void each_kept_key_is_filled_to_the_target_and_refilled_after_a_take() throws Exception {
        Counting items = new Counting();
        RefillingPool<String, String> pool = new RefillingPool<>("test-refill", 3, items);

        pool.keep("a");
        HostFixture.await("a is filled", WAIT, () -> pool.ready("a") == 3);
        Optional<String> taken = pool.take("a");
        HostFixture.await("a is refilled", WAIT, () -> pool.ready("a") == 3);
        pool.keep("b");
        HostFixture.await("b is filled", WAIT, () -> pool.ready("b") == 3);

        assertThat(taken).contains("a-1");
        assertThat(pool.keys()).containsExactlyInAnyOrder("a", "b");
        assertThat(items.made.get()).isEqualTo(7);
        assertThat(pool.close(false)).hasSize(6).doesNotContain("a-1");
    }

    @Test
    void demand_grows_a_key_past_its_target_within_the_ceiling_and_trim_shrinks_it_after() throws Exception {
        Counting items = new Counting();
        PoolDemand<String> demand = new PoolDemand<>(Duration.ofSeconds(1), Duration.ofMillis(300), 2, 6);
        RefillingPool<String, String> pool = new RefillingPool<>(
                "test-refill", 2, items, Optional.empty(), Duration.ZERO, waited -> {}, Optional.of(demand));
        pool.keep("a");
        pool.keep("b");
        HostFixture.await("a and b are filled", WAIT, () -> pool.ready("a") == 2 && pool.ready("b") == 2);

        for (int i = 0; i < 5; i++) {
            pool.take("a"); // a burst of 5 (2 found, 3 missed)
        }
        // a's target is 5 now, but all keys together stay under the ceiling of 6 once above their own target of 2
        HostFixture.await("a grows", WAIT, () -> pool.ready("a") == 4 && pool.ready("b") == 2);
        assertThat(pool.target("a")).isEqualTo(5);
        assertThat(pool.trim()).isZero();

        HostFixture.await("the demand passes", WAIT, () -> pool.target("a") == 2);
        assertThat(pool.trim()).isEqualTo(2);
        assertThat(pool.ready("a")).isEqualTo(2);
        assertThat(items.discarded).hasSize(2);
        assertThat(pool.close(false)).hasSize(4);
    }

    @Test
    void no_make_runs_on_once_close_returns_even_for_a_refill_begun_just_before() throws Exception {
        for (int round = 0; round < 2000; round++) {
            Counting items = new Counting();
            RefillingPool<String, String> pool = new RefillingPool<>("test-refill", 1, items);
            pool.register("a");
            Thread refiller = Thread.ofPlatform().start(pool::refill);
            pool.close(false);
            int afterClose = items.inProgress.get();
            refiller.join();

            assertThat(afterClose)
                    .as("makes in progress after close() returned, round %d", round)
                    .isZero();
        }
    }

    @Test
    void concurrent_takes_never_get_the_same_item() throws Exception {
        Counting items = new Counting();
        RefillingPool<String, String> pool = new RefillingPool<>("test-refill", 8, items);
        pool.keep("a");
        HostFixture.await("a is filled", WAIT, () -> pool.ready("a") == 8);

        Set<String> seen = ConcurrentHashMap.newKeySet();
        AtomicInteger taken = new AtomicInteger();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> takes = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                takes.add(threads.submit(() -> pool.take("a").ifPresent(item -> {
                    taken.incrementAndGet();
                    seen.add(item);
                })));
            }
            for (Future<?> take : takes) {
                take.get();
            }
        }

        assertThat(seen).hasSize(taken.get());
        pool.close(false);
    }

    @Test
    void a_make_that_gives_up_ends_the_refill_until_the_next_take() throws Exception {
        Counting items = new Counting();
        items.failing.set(true);
        RefillingPool<String, String> pool = new RefillingPool<>("test-refill", 2, items);

        pool.keep("a");
        HostFixture.await("the refill tried once", WAIT, () -> items.tries.get() == 1 && items.inProgress.get() == 0);
        items.failing.set(false);
        assertThat(pool.take("a")).isEmpty();
        HostFixture.await("the take refilled it", WAIT, () -> pool.ready("a") == 2);

        assertThat(items.tries.get()).isEqualTo(3); // one that gave up, two made: no retry loop
        pool.close(false);
    }

    @Test
    void fills_on_several_threads_never_make_more_than_the_target() throws Exception {
        Counting items = new Counting();
        items.gate = new CountDownLatch(1);
        RefillingPool<String, String> pool = new RefillingPool<>("test-refill", 2, items);
        pool.register("a");

        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> fills = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                fills.add(threads.submit(() -> {
                    pool.fill();
                    return null;
                }));
            }
            HostFixture.await("two makes started", WAIT, () -> items.inProgress.get() == 2);
            items.gate.countDown();
            for (Future<?> fill : fills) {
                fill.get();
            }
        }

        assertThat(items.made.get()).isEqualTo(2);
        assertThat(pool.ready("a")).isEqualTo(2);
        pool.close(false);
    }

    @Test
    void an_item_given_back_is_first_in_line_and_close_hands_the_rest_to_the_caller() throws Exception {
        Counting items = new Counting();
        RefillingPool<String, String> pool = new RefillingPool<>("test-refill", 2, items);
        pool.keep("a");
        HostFixture.await("a is filled", WAIT, () -> pool.ready("a") == 2);

        String taken = pool.takeReady("a").orElseThrow();
        HostFixture.await("a is refilled", WAIT, () -> pool.ready("a") == 2);
        assertThat(pool.giveBack("a", taken)).isTrue();
        assertThat(pool.poll("a")).contains(taken);

        List<String> left = pool.close(false);
        assertThat(left).hasSize(2);
        assertThat(pool.giveBack("a", taken)).isFalse();
        assertThat(pool.take("a")).isEmpty();
        assertThat(pool.close(false)).isEmpty();
    }

    @Test
    void an_item_made_while_the_pool_closes_is_discarded() throws Exception {
        Counting items = new Counting();
        items.gate = new CountDownLatch(1);
        RefillingPool<String, String> pool = new RefillingPool<>("test-refill", 1, items);
        pool.keep("a");
        HostFixture.await("a make started", WAIT, () -> items.inProgress.get() == 1);

        Thread closing = Thread.ofVirtual().start(() -> {
            try {
                assertThat(pool.close(false)).isEmpty();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        HostFixture.await("the pool is closed", WAIT, pool::closed);
        items.gate.countDown();
        closing.join();

        assertThat(items.discarded).containsExactly("a-1");
    }

    @Test
    void a_dropped_key_hands_over_its_items_and_discards_the_one_being_made() throws Exception {
        Counting items = new Counting();
        RefillingPool<String, String> pool = new RefillingPool<>("test-refill", 2, items);
        pool.keep("a");
        HostFixture.await("a is filled", WAIT, () -> pool.ready("a") == 2);
        items.gate = new CountDownLatch(1);
        assertThat(pool.take("a")).contains("a-1");
        HostFixture.await("a refill started", WAIT, () -> items.inProgress.get() == 1);

        List<String> dropped = pool.drop("a");
        items.gate.countDown();
        HostFixture.await("the refill ended", WAIT, () -> items.inProgress.get() == 0 && !items.discarded.isEmpty());

        assertThat(dropped).containsExactly("a-2");
        assertThat(items.discarded).containsExactly("a-3");
        assertThat(pool.keys()).doesNotContain("a");
        assertThat(pool.ready("a")).isZero();
    }

    @Test
    void a_pool_of_target_zero_keeps_nothing() throws Exception {
        Counting items = new Counting();
        RefillingPool<String, String> pool = new RefillingPool<>("test-refill", 0, items);

        assertThat(pool.keep("a")).isFalse();
        assertThat(pool.take("a")).isEmpty();
        pool.close(false);
        assertThat(items.made.get()).isZero();
    }

    @Test
    void keep_with_a_key_limit_never_keeps_more_keys() throws Exception {
        Counting items = new Counting();
        RefillingPool<String, String> pool = new RefillingPool<>("test-refill", 1, items);

        assertThat(pool.keep("a", 2)).isTrue();
        assertThat(pool.keep("b", 2)).isTrue();
        assertThat(pool.keep("c", 2)).isFalse();
        assertThat(pool.keep("a", 2)).isTrue();

        assertThat(pool.keys()).containsExactlyInAnyOrder("a", "b");
        pool.close(false);
    }
}
