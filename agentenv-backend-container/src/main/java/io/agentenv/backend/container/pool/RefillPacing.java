package io.agentenv.backend.container.pool;

import java.time.Duration;

/**
 * When the warm pool's refill may restore its next member. After a take the refill first waits {@link #burstGap}: a
 * take on its own (creates one at a time) then lets it start, as before, only that much later. A take that follows the
 * previous one within {@code burstGap} is part of a burst: the refill then waits until no take has happened for
 * {@link #quiet}, so its restore (runc, CRIU and the new member's envd: ~120 ms of CPU, measured) does not compete with
 * the burst's claims and their first commands for the same cores; the burst's creates are claims while members last,
 * and on-demand restores after that either way. The caller bounds the whole wait (a steady stream of concurrent
 * creates must not keep the pool empty). Times are {@link System#nanoTime()} values; thread-safe.
 */
public final class RefillPacing {

    private final long burstGap;
    private final long quiet;
    private long lastTake;
    private boolean burst;
    private boolean taken;

    public RefillPacing(Duration burstGap, Duration quiet) {
        if (burstGap.isNegative() || quiet.isNegative()) {
            throw new IllegalArgumentException("durations must not be negative: " + burstGap + ", " + quiet);
        }
        this.burstGap = burstGap.toNanos();
        this.quiet = quiet.toNanos();
    }

    /** A member was taken at {@code now}. */
    public synchronized void taken(long now) {
        burst = taken && now - lastTake <= burstGap;
        lastTake = now;
        taken = true;
    }

    /** How long the refill should wait at {@code now} before its next restore (zero: restore now). */
    public synchronized Duration delay(long now) {
        if (!taken) {
            return Duration.ZERO;
        }
        long left = lastTake + (burst ? quiet : burstGap) - now;
        return left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }
}
