package io.agentenv.envd.process;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.agentenv.envd.protocol.process.ProcessEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SubscriptionTest {
    private static final ProcessEvent.DataEvent CHUNK = ProcessEvent.DataEvent.newBuilder()
            .setStdout(ByteString.copyFromUtf8("x"))
            .build();

    @Test
    void a_full_subscription_makes_the_producer_wait_until_the_client_reads() throws Exception {
        Subscription subscription = new Subscription(() -> {}, 10, Duration.ofMinutes(1));
        subscription.offerData(CHUNK, 6);
        AtomicReference<Thread> producer = new AtomicReference<>();
        CompletableFuture<Void> second = CompletableFuture.runAsync(() -> {
            producer.set(Thread.currentThread());
            try {
                subscription.offerData(CHUNK, 6);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        awaitWaiting(producer);
        assertThat(second).isNotDone();

        assertThat(subscription.poll(Duration.ZERO)).isInstanceOf(Subscription.Item.Data.class);

        second.get(5, TimeUnit.SECONDS);
        assertThat(subscription.poll(Duration.ZERO)).isInstanceOf(Subscription.Item.Data.class);
        assertThat(subscription.poll(Duration.ZERO)).isNull();
    }

    @Test
    void a_client_that_never_makes_room_is_cut_off_after_the_stall_limit() throws Exception {
        AtomicBoolean closed = new AtomicBoolean();
        Subscription subscription = new Subscription(() -> closed.set(true), 10, Duration.ofMillis(50));
        subscription.offerData(CHUNK, 8);

        subscription.offerData(CHUNK, 8); // returns once the stall limit has passed

        assertThat(closed).isTrue();
        assertThat(subscription.poll(Duration.ZERO)).isInstanceOf(Subscription.Item.Data.class);
        assertThat(subscription.poll(Duration.ZERO)).isInstanceOf(Subscription.Item.Overflow.class);
        subscription.offerData(CHUNK, 1);
        subscription.offerEnd(ProcessEvent.EndEvent.getDefaultInstance());
        assertThat(subscription.poll(Duration.ZERO))
                .as("nothing is queued after the cut")
                .isNull();
    }

    @Test
    void a_single_chunk_larger_than_the_budget_still_passes_when_nothing_is_pending() throws Exception {
        Subscription subscription = new Subscription(() -> {}, 10, Duration.ofMinutes(1));
        subscription.offerData(CHUNK, 100);
        assertThat(subscription.poll(Duration.ZERO)).isInstanceOf(Subscription.Item.Data.class);
    }

    @Test
    void closing_releases_a_waiting_producer() throws Exception {
        Subscription subscription = new Subscription(() -> {}, 10, Duration.ofMinutes(1));
        subscription.offerData(CHUNK, 10);
        AtomicReference<Thread> producer = new AtomicReference<>();
        CompletableFuture<Void> blocked = CompletableFuture.runAsync(() -> {
            producer.set(Thread.currentThread());
            try {
                subscription.offerData(CHUNK, 10);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        awaitWaiting(producer);

        subscription.close();

        blocked.get(5, TimeUnit.SECONDS);
    }

    private static void awaitWaiting(AtomicReference<Thread> thread) {
        Instant deadline = Instant.now().plusSeconds(5);
        while (thread.get() == null || thread.get().getState() != Thread.State.TIMED_WAITING) {
            assertThat(Instant.now()).as("producer to block").isBefore(deadline);
            Thread.onSpinWait();
        }
    }
}
