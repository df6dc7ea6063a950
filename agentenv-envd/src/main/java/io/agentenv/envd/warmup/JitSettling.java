package io.agentenv.envd.warmup;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.function.LongSupplier;

/**
 * Runs batches of warm-up rounds until a batch leaves the JIT compiler (almost) idle: the request path a restored
 * sandbox runs is then compiled, not still interpreted and queued for C1 at its first commands.
 *
 * <p>Why batches and waits: the interpreter asks the compilation policy about a method only every 2^7 calls
 * ({@code Tier0InvokeNotifyFreqLog}), and the policy raises its thresholds with the length of the compile queue
 * ({@code Tier3LoadFeedback}). Rounds sent while C1 is busy leave methods that were called often enough uncompiled
 * until their next notification, 128 calls later. So before each batch the compiler is left to drain its queue (its
 * thread's CPU stops moving), and a batch sends enough rounds that every method called once a round passes another
 * notification; the batches stop when one cost the compiler less than a threshold, after a cap, or at a time limit.
 */
final class JitSettling {
    /** What one batch costs: the rounds it sent. */
    @FunctionalInterface
    interface Batch {
        int run() throws IOException;
    }

    /**
     * @param batches     how many batches ran
     * @param requests    the requests they sent
     * @param settled     true when the last batch cost the compiler less than the threshold
     * @param compilerCpu the compiler's CPU in each batch (including the wait for it to go idle after), in nanoseconds
     */
    record Result(int batches, int requests, boolean settled, long[] compilerCpu) {
        Result {
            if (batches < 0 || requests < 0) {
                throw new IllegalArgumentException("negative count");
            }
            compilerCpu = compilerCpu.clone();
        }

        @Override
        public long[] compilerCpu() {
            return compilerCpu.clone();
        }
    }

    /** How a settling waits between its readings (a real sleep in envd, a step of a fake clock in tests). */
    @FunctionalInterface
    interface Pause {
        void pause(Duration duration) throws InterruptedException;
    }

    private final LongSupplier compilerNanos;
    private final LongSupplier nanoTime;
    private final Pause pause;
    private final Duration poll;
    private final Duration quietFor;
    private final long quietNanos;
    private final int maxBatches;
    private final Duration limit;

    /**
     * @param compilerNanos the JIT compiler threads' CPU so far (nanoseconds)
     * @param nanoTime      a monotonic clock
     * @param poll          how often the compiler's CPU is read while waiting for it to go idle
     * @param quietFor      how long its CPU must not move for it to count as idle
     * @param quietNanos    a batch whose compiler CPU stays below this counts as settled
     * @param maxBatches    at most this many batches
     * @param limit         no batch starts after this much time
     */
    JitSettling(
            LongSupplier compilerNanos,
            LongSupplier nanoTime,
            Pause pause,
            Duration poll,
            Duration quietFor,
            long quietNanos,
            int maxBatches,
            Duration limit) {
        this.compilerNanos = requireNonNull(compilerNanos, "compilerNanos is null");
        this.nanoTime = requireNonNull(nanoTime, "nanoTime is null");
        this.pause = requireNonNull(pause, "pause is null");
        this.poll = requireNonNull(poll, "poll is null");
        this.quietFor = requireNonNull(quietFor, "quietFor is null");
        this.limit = requireNonNull(limit, "limit is null");
        if (poll.isNegative() || poll.isZero() || quietFor.compareTo(poll) < 0) {
            throw new IllegalArgumentException("poll must be positive and at most quietFor");
        }
        if (quietNanos < 0 || maxBatches < 0) {
            throw new IllegalArgumentException("quietNanos and maxBatches must not be negative");
        }
        this.quietNanos = quietNanos;
        this.maxBatches = maxBatches;
    }

    /** Batches until one is quiet, {@code maxBatches} ran or the time limit passed; the compiler is idle before each. */
    Result run(Batch batch) throws IOException, InterruptedException {
        long deadline = nanoTime.getAsLong() + limit.toNanos();
        long[] costs = new long[maxBatches];
        int batches = 0;
        int requests = 0;
        boolean settled = false;
        if (maxBatches == 0) {
            return new Result(0, 0, false, costs);
        }
        awaitIdle(deadline);
        while (batches < maxBatches && nanoTime.getAsLong() < deadline) {
            long before = compilerNanos.getAsLong();
            requests += batch.run();
            boolean idle = awaitIdle(deadline);
            costs[batches] = compilerNanos.getAsLong() - before;
            batches++;
            if (idle && costs[batches - 1] < quietNanos) { // a wait cut short by the deadline proves nothing
                settled = true;
                break;
            }
        }
        return new Result(batches, requests, settled, Arrays.copyOf(costs, batches));
    }

    /** Waits until the compiler's CPU has not moved for {@code quietFor} (true), or the deadline (false). */
    private boolean awaitIdle(long deadline) throws InterruptedException {
        long last = compilerNanos.getAsLong();
        long quietSince = nanoTime.getAsLong();
        while (nanoTime.getAsLong() - quietSince < quietFor.toNanos()) {
            if (nanoTime.getAsLong() >= deadline) {
                return false;
            }
            pause.pause(poll);
            long now = compilerNanos.getAsLong();
            if (now != last) {
                last = now;
                quietSince = nanoTime.getAsLong();
            }
        }
        return true;
    }
}
