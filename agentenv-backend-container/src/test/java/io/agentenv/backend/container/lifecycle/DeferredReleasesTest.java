package io.agentenv.backend.container.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.host.Attempts;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.SandboxId;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** The interleavings of a pause's release that runs after the answer with a resume of the same sandbox and shutdown. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class DeferredReleasesTest {

    private static final SandboxId A = new SandboxId("a".repeat(SandboxId.LENGTH));
    private static final SandboxId B = new SandboxId("b".repeat(SandboxId.LENGTH));

    private final DeferredReleases releases = new DeferredReleases();
    private final List<String> done = new CopyOnWriteArrayList<>();

    private static Attempts.Step held(CountDownLatch gate, List<String> done, String name) {
        return () -> {
            if (!gate.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("gate never opened");
            }
            done.add(name);
        };
    }

    /** {@code awaitOne(30 s)} on a thread of its own: its answer, once it returns. */
    private CompletableFuture<Boolean> awaitOneInBackground() {
        CompletableFuture<Boolean> answer = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                answer.complete(releases.awaitOne(Duration.ofSeconds(30)));
            } catch (InterruptedException e) {
                answer.completeExceptionally(e);
            }
        });
        return answer;
    }

    private static boolean finishesWithin(CompletableFuture<?> future, long millis) throws Exception {
        try {
            future.get(millis, TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        }
    }

    @Test
    void await_one_waits_for_a_running_release_and_not_for_failed_ones() throws Exception {
        assertThat(releases.awaitOne(Duration.ofSeconds(1)))
                .as("nothing in flight")
                .isFalse();
        releases.start(
                B,
                List.of(() -> {
                    throw new IOException("busy");
                }),
                List.of());
        CountDownLatch gate = new CountDownLatch(1);
        releases.start(A, List.of(held(gate, done, "slot")), List.of());
        CompletableFuture<Boolean> found = awaitOneInBackground();

        assertThat(finishesWithin(found, 200)).as("returned while A runs").isFalse();
        gate.countDown();
        assertThat(found.get(30, TimeUnit.SECONDS)).isTrue();
        assertThat(done).containsExactly("slot");
        assertThat(releases.awaitOne(Duration.ofSeconds(1)))
                .as("only B is left, and it failed: nothing running to wait for")
                .isFalse();
    }

    @Test
    void a_release_failing_during_the_wait_does_not_end_the_wait_for_a_running_one() throws Exception {
        CountDownLatch failB = new CountDownLatch(1);
        releases.start(
                B,
                List.of(() -> {
                    failB.await(30, TimeUnit.SECONDS);
                    throw new IOException("busy");
                }),
                List.of());
        CompletableFuture<Boolean> found = awaitOneInBackground();
        CountDownLatch gate = new CountDownLatch(1);
        releases.start(A, List.of(held(gate, done, "slot")), List.of());
        failB.countDown(); // B, the one the wait began with, fails (and is tried again): it frees nothing

        assertThat(finishesWithin(found, 300))
                .as("returned when B failed, while A still runs")
                .isFalse();
        gate.countDown();
        assertThat(found.get(30, TimeUnit.SECONDS)).isTrue();
        assertThat(done).containsExactly("slot");
    }

    @Test
    void a_resume_waits_for_its_release_and_later_steps_run_after_the_parallel_ones() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        releases.start(
                A, List.of(held(gate, done, "slot"), () -> done.add("container")), List.of(() -> done.add("dir")));
        CountDownLatch resumed = new CountDownLatch(1);
        Thread resume = Thread.ofVirtual().start(() -> {
            try {
                releases.await(A);
                resumed.countDown();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });

        assertThat(resumed.await(200, TimeUnit.MILLISECONDS))
                .as("resumed while the slot is still held")
                .isFalse();
        assertThat(done).doesNotContain("dir");
        gate.countDown();
        assertThat(resumed.await(30, TimeUnit.SECONDS)).isTrue();
        resume.join();
        assertThat(done).containsExactlyInAnyOrder("slot", "container", "dir");
        assertThat(done.getLast()).isEqualTo("dir");
        assertThat(releases.inFlight()).isEmpty();
    }

    @Test
    void another_sandbox_or_one_never_paused_does_not_wait() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        try {
            releases.start(A, List.of(held(gate, done, "slot")), List.of());
            releases.await(B); // returns at once: the gate is still closed
            assertThat(done).isEmpty();
        } finally {
            gate.countDown();
        }
        releases.await(A);
        assertThat(done).containsExactly("slot");
    }

    @Test
    void a_failed_release_is_tried_again_by_the_resume_that_waits_for_it() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        releases.start(
                A,
                List.of(() -> {
                    if (attempts.incrementAndGet() == 1) {
                        throw new IOException("runc delete failed once");
                    }
                }),
                List.of(() -> done.add("dir")));

        releases.await(A);
        assertThat(attempts).hasValue(2);
        assertThat(done).containsExactly("dir", "dir"); // every step is idempotent: all run again
        assertThat(releases.inFlight()).isEmpty();
    }

    @Test
    void a_release_that_fails_again_keeps_the_sandbox_paused_with_the_reason() throws Exception {
        releases.start(
                A,
                List.of(() -> {
                    throw new IOException("still mounted");
                }),
                List.of());
        assertThatThrownBy(() -> releases.await(A))
                .isInstanceOfSatisfying(
                        BackendException.Recoverable.class,
                        e -> assertThat(e.getMessage()).contains("not released yet", "still mounted"));
    }

    @Test
    void a_release_that_failed_again_stays_and_the_next_wait_such_as_a_kill_retries_it() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        releases.start(
                A,
                List.of(() -> {
                    if (attempts.incrementAndGet() <= 2) {
                        throw new IOException("loop device busy");
                    }
                }),
                List.of(() -> done.add("dir")));
        assertThatThrownBy(() -> releases.await(A)).isInstanceOf(BackendException.Recoverable.class);
        assertThat(releases.inFlight()).containsExactly(A);

        releases.await(A); // the kill of the paused sandbox (ContainerBackendFactory.discardPaused)

        assertThat(attempts).hasValue(3);
        assertThat(done).containsExactly("dir", "dir", "dir");
        assertThat(releases.inFlight()).isEmpty();
    }

    @Test
    void shutdown_waits_for_every_release_in_flight() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        releases.start(A, List.of(held(gate, done, "a")), List.of());
        releases.start(B, List.of(held(gate, done, "b")), List.of());
        CountDownLatch stopped = new CountDownLatch(1);
        Thread shutdown = Thread.ofVirtual().start(() -> {
            try {
                releases.awaitAll();
                stopped.countDown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(stopped.await(200, TimeUnit.MILLISECONDS)).isFalse();
        gate.countDown();
        assertThat(stopped.await(30, TimeUnit.SECONDS)).isTrue();
        shutdown.join();
        assertThat(done).containsExactlyInAnyOrder("a", "b");
    }

    @Test
    void shutdown_tries_a_failed_release_once_more_so_a_stopped_backend_leaves_nothing() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        releases.start(
                A,
                List.of(() -> {
                    if (attempts.incrementAndGet() == 1) {
                        throw new IOException("ip netns delete failed once");
                    }
                }),
                List.of(() -> done.add("dir")));

        releases.awaitAll();

        assertThat(attempts).hasValue(2);
        assertThat(done).containsExactly("dir", "dir");
        assertThat(releases.inFlight()).isEmpty();
    }
}
