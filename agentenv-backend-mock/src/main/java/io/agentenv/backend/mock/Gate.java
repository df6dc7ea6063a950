package io.agentenv.backend.mock;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Holds a backend call until the test releases it, so a test can observe the orchestrator while the compare-and-set
 * winner is inside the backend (no sleeps). One gate holds exactly one call.
 */
public final class Gate {
    /** A held call gives up after this long so a broken test cannot hang the build. */
    private static final Duration MAX_HOLD = Duration.ofMinutes(2);

    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);

    /** Waits until a call has reached the gate; fails the test with an AssertionError after {@code timeout}. */
    public void awaitEntered(Duration timeout) {
        try {
            if (!entered.await(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new AssertionError("no call reached the gate within " + timeout);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for the gate", e);
        }
    }

    public boolean hasEntered() {
        return entered.getCount() == 0;
    }

    /** Lets the held call continue (or lets the next one through without holding). */
    public void release() {
        released.countDown();
    }

    void block() {
        entered.countDown();
        try {
            if (!released.await(MAX_HOLD.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new IllegalStateException("gate was never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while held at a gate", e);
        }
    }
}
