package io.agentenv.backend.container.pool;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;

/**
 * How many items a pool should keep per key, from recent demand: the most takes of the key (hits and misses alike)
 * within any {@code window} during the last {@code memory}, never fewer than {@code floor} nor more than
 * {@code ceiling}. A burst of 20 creates grows the key's target to 20 for {@code memory} after it; once no burst that
 * large came for that long the target falls back towards the next largest one, and to {@code floor}. Times are
 * {@link System#nanoTime()} values; thread-safe.
 */
public final class PoolDemand<K> {

    /** One key's takes within the last window, and the peaks since {@code memory} ago (counts decreasing). */
    private static final class History {
        final Deque<Long> recent = new ArrayDeque<>();
        final Deque<long[]> peaks = new ArrayDeque<>(); // {time, count}; each count larger than every later one
    }

    private final long window;
    private final long memory;
    private final int floor;
    private final int ceiling;
    private final Map<K, History> histories = new HashMap<>();

    /**
     * @param window  takes this close together count as one burst's
     * @param memory  how long a burst keeps the target up
     * @param floor   the target without demand (the configured pool size)
     * @param ceiling the largest target demand can ask for
     */
    public PoolDemand(Duration window, Duration memory, int floor, int ceiling) {
        if (window.isNegative() || window.isZero() || memory.isNegative()) {
            throw new IllegalArgumentException(
                    "window must be positive, memory not negative: " + window + ", " + memory);
        }
        if (floor < 0 || ceiling < floor) {
            throw new IllegalArgumentException("need 0 <= floor <= ceiling: " + floor + ", " + ceiling);
        }
        this.window = window.toNanos();
        this.memory = memory.toNanos();
        this.floor = floor;
        this.ceiling = ceiling;
    }

    public int floor() {
        return floor;
    }

    public int ceiling() {
        return ceiling;
    }

    /** A take of {@code key} at {@code now} (whether or not an item was ready). */
    public synchronized void taken(K key, long now) {
        requireNonNull(key, "key is null");
        History history = histories.computeIfAbsent(key, k -> new History());
        history.recent.addLast(now);
        while (now - history.recent.peekFirst() > window) {
            history.recent.removeFirst();
        }
        long count = history.recent.size();
        while (!history.peaks.isEmpty() && history.peaks.peekLast()[1] <= count) {
            history.peaks.removeLast(); // older and not larger: never the peak again
        }
        history.peaks.addLast(new long[] {now, count});
    }

    /** The items {@code key} should have at {@code now}. */
    public synchronized int target(K key, long now) {
        History history = histories.get(key);
        if (history == null) {
            return floor;
        }
        while (!history.peaks.isEmpty() && now - history.peaks.peekFirst()[0] > memory) {
            history.peaks.removeFirst();
        }
        long peak = history.peaks.isEmpty() ? 0 : history.peaks.peekFirst()[1];
        return (int) Math.min(ceiling, Math.max(floor, peak));
    }

    /** Forgets {@code key}'s demand (it is no longer kept). */
    public synchronized void forget(K key) {
        histories.remove(key);
    }
}
