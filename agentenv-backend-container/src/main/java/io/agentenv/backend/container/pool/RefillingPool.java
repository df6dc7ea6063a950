package io.agentenv.backend.container.pool;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Items made ahead of need, kept per key (a template, a disk size, or one key for all) up to a target count each, so
 * that a taker never waits for one to be made. One background virtual thread refills: started by {@link #keep}, a
 * {@link #take} or {@link #refill}, it makes the first key's missing items, then the next key's, one at a time, until
 * every kept key has {@code target}. A make that cannot make one now (empty) ends that refill; the next take or
 * {@link #refill} tries again, never in a loop. With a {@link RefillPacing}, each make first waits as it says (at most
 * {@code maxDeferral}), so a burst of takes is not slowed by its own refill. With a {@link PoolDemand}, a key's target
 * grows above {@code target} with its recent demand (every take counts, found or not) while all keys' items together
 * stay under the demand's ceiling, and {@link #trim} discards what a key holds beyond its target once that demand has
 * passed.
 *
 * <p>Every item is handed out once: a take removes it from its queue under the pool's lock. An item made while
 * {@link #close} runs is discarded, never kept. {@link #close} stops the refill (waiting for the make in progress, or
 * interrupting it) and returns the ready items: the caller owns them. Thread-safe.
 *
 * @param <K> what items are kept by
 * @param <T> the items
 */
public final class RefillingPool<K, T> {

    private static final Duration WAIT_SLICE = Duration.ofMillis(50);

    /** How the pool makes one item, and what happens to one it no longer keeps. */
    public interface Items<K, T> {
        /** A new item of {@code key}; empty when none can be made now (the maker logs why). */
        Optional<T> make(K key) throws InterruptedException;

        /** An item made while the pool closed: nobody will take it. */
        void discard(T item) throws InterruptedException;
    }

    /** What a refill reports after waiting for its pacing (for the owner's log). */
    @FunctionalInterface
    public interface PacingWaited {
        void waited(Duration waited);
    }

    private final String name;
    private final int target;
    private final Items<K, T> items;
    private final Optional<RefillPacing> pacing;
    private final Duration maxDeferral;
    private final PacingWaited onPacingWaited;
    private final Optional<PoolDemand<K>> demand;
    private final Object lock = new Object();
    /** Ready items per key, in the order the keys were first kept. Guarded by lock. */
    private final Map<K, Deque<T>> ready = new LinkedHashMap<>();
    /** Items being made per key (by {@link #fill} on any thread): they count towards the target. Guarded by lock. */
    private final Map<K, Integer> making = new HashMap<>();
    /** A refill thread runs; {@link #again}: something changed since it last looked. Guarded by lock. */
    private boolean refilling;

    private boolean again;
    private volatile Thread refill;
    private volatile boolean closed;

    /**
     * @param name   the refill thread's name
     * @param target items kept per key; 0 keeps none (every take is empty)
     */
    public RefillingPool(String name, int target, Items<K, T> items) {
        this(name, target, items, Optional.empty(), Duration.ZERO, waited -> {});
    }

    /**
     * @param pacing         when each make may start after takes
     * @param maxDeferral    the longest a make waits for the pacing
     * @param onPacingWaited told how long a make waited for the pacing
     */
    public RefillingPool(
            String name,
            int target,
            Items<K, T> items,
            Optional<RefillPacing> pacing,
            Duration maxDeferral,
            PacingWaited onPacingWaited) {
        this(name, target, items, pacing, maxDeferral, onPacingWaited, Optional.empty());
    }

    /**
     * @param demand grows a key's target above {@code target} with its recent takes (its floor is {@code target})
     */
    public RefillingPool(
            String name,
            int target,
            Items<K, T> items,
            Optional<RefillPacing> pacing,
            Duration maxDeferral,
            PacingWaited onPacingWaited,
            Optional<PoolDemand<K>> demand) {
        this.name = requireNonNull(name, "name is null");
        if (target < 0) {
            throw new IllegalArgumentException("target must be >= 0: " + target);
        }
        this.target = target;
        this.items = requireNonNull(items, "items is null");
        this.pacing = requireNonNull(pacing, "pacing is null");
        this.maxDeferral = requireNonNull(maxDeferral, "maxDeferral is null");
        this.onPacingWaited = requireNonNull(onPacingWaited, "onPacingWaited is null");
        this.demand = requireNonNull(demand, "demand is null");
        demand.ifPresent(d -> {
            if (d.floor() != target) {
                throw new IllegalArgumentException(
                        "the demand's floor must be the target: " + d.floor() + ", " + target);
            }
        });
    }

    /** Items kept for {@code key} now: {@code target}, or more while its recent demand asks for more. */
    public int target(K key) {
        return demand.map(d -> d.target(key, System.nanoTime())).orElse(target);
    }

    /** Starts keeping {@code key} filled (idempotent) and refills; false when the pool keeps nothing or is closed. */
    public boolean keep(K key) {
        return keep(key, Integer.MAX_VALUE);
    }

    /**
     * {@link #keep}, unless {@code maxKeys} keys are kept already; true if {@code key} is kept now. The count and the
     * insertion are one step, so concurrent calls cannot exceed it.
     */
    public boolean keep(K key, int maxKeys) {
        if (target == 0 || closed) {
            return false;
        }
        synchronized (lock) {
            if (!ready.containsKey(key)) {
                if (ready.size() >= maxKeys) {
                    return false;
                }
                ready.put(key, new ArrayDeque<>());
            }
        }
        refill();
        return true;
    }

    /** Starts keeping {@code key} (idempotent) without starting a refill: the first take or {@link #refill} does. */
    public void register(K key) {
        synchronized (lock) {
            ready.computeIfAbsent(key, k -> new ArrayDeque<>());
        }
    }

    /** Whether {@code key} is kept. */
    public boolean keeps(K key) {
        synchronized (lock) {
            return ready.containsKey(key);
        }
    }

    /** The keys kept, in the order they were first kept. */
    public Set<K> keys() {
        synchronized (lock) {
            return Set.copyOf(ready.keySet());
        }
    }

    /**
     * A ready item of {@code key}, never handed out before, or empty; keeps {@code key} from now on and refills. A take
     * counts for the pacing whether or not it found one (a miss is a create that restores on demand).
     */
    public Optional<T> take(K key) {
        return take(key, true);
    }

    /**
     * A ready item of {@code key}, or empty, without counting for the pacing or starting a refill (the caller calls
     * {@link #refill} when it wants one: after it made the item it needed itself, say).
     */
    public Optional<T> poll(K key) {
        if (target == 0 || closed) {
            return Optional.empty();
        }
        synchronized (lock) {
            Deque<T> queue = ready.get(key);
            return Optional.ofNullable(queue == null ? null : queue.pollFirst());
        }
    }

    /** {@link #take}, counting for the pacing only when an item was found. */
    public Optional<T> takeReady(K key) {
        return take(key, false);
    }

    private Optional<T> take(K key, boolean countMiss) {
        if (target == 0 || closed) {
            return Optional.empty();
        }
        T item;
        synchronized (lock) {
            item = ready.computeIfAbsent(key, k -> new ArrayDeque<>()).pollFirst();
        }
        if (item != null || countMiss) {
            long now = System.nanoTime();
            pacing.ifPresent(p -> p.taken(now));
            demand.ifPresent(d -> d.taken(key, now));
        }
        refill();
        return Optional.ofNullable(item);
    }

    /**
     * Puts an item handed out back first in line (one taken but not used); false when the pool is closed (the caller
     * still owns it).
     */
    public boolean giveBack(K key, T item) {
        requireNonNull(item, "item is null");
        synchronized (lock) {
            if (closed) {
                return false;
            }
            ready.computeIfAbsent(key, k -> new ArrayDeque<>()).addFirst(item);
            return true;
        }
    }

    /** Adds an item that exists already (one a previous run left) last in line; false when the pool is closed. */
    public boolean add(K key, T item) {
        requireNonNull(item, "item is null");
        synchronized (lock) {
            if (closed) {
                return false;
            }
            ready.computeIfAbsent(key, k -> new ArrayDeque<>()).addLast(item);
            return true;
        }
    }

    /**
     * Stops keeping {@code key} and hands its ready items to the caller (an item being made for it is discarded when
     * it is done). A later {@link #keep} or take of the key keeps it again.
     */
    public List<T> drop(K key) {
        demand.ifPresent(d -> d.forget(key));
        synchronized (lock) {
            Deque<T> queue = ready.remove(key);
            return queue == null ? List.of() : List.copyOf(queue);
        }
    }

    /** Items of {@code key} ready now. */
    public int ready(K key) {
        synchronized (lock) {
            Deque<T> queue = ready.get(key);
            return queue == null ? 0 : queue.size();
        }
    }

    /** Items of all keys ready now. */
    public int readyTotal() {
        synchronized (lock) {
            return ready.values().stream().mapToInt(Deque::size).sum();
        }
    }

    /** Starts the refill unless it runs already (then it looks again before it stops). */
    public void refill() {
        if (target == 0 || closed) {
            return;
        }
        synchronized (lock) {
            if (closed) {
                return;
            }
            if (refilling) {
                again = true;
                return;
            }
            refilling = true;
            again = false;
            // started under the lock: a close() that follows sees this thread and waits for it (started after the
            // lock, a refill begun just before close() could still be making an item while close() cleans up)
            refill = Thread.ofVirtual().name(name).start(this::refillRounds);
        }
    }

    /** Makes items on the calling thread until every kept key has its target (or a make gives up). */
    public void fill() throws InterruptedException {
        while (!closed) {
            K key = null;
            synchronized (lock) {
                int total = 0;
                for (Map.Entry<K, Deque<T>> entry : ready.entrySet()) {
                    total += entry.getValue().size() + making.getOrDefault(entry.getKey(), 0);
                }
                for (Map.Entry<K, Deque<T>> entry : ready.entrySet()) {
                    int held = entry.getValue().size() + making.getOrDefault(entry.getKey(), 0);
                    // up to the target always; above it (demand) only while all keys together stay under the ceiling
                    boolean wanted = held < target
                            || (held < target(entry.getKey())
                                    && total < demand.map(PoolDemand::ceiling).orElse(0));
                    if (wanted) {
                        key = entry.getKey();
                        break;
                    }
                }
                if (key != null) {
                    making.merge(key, 1, Integer::sum);
                }
            }
            if (key == null) {
                return;
            }
            Optional<T> made = Optional.empty();
            boolean kept = false;
            try {
                if (pacing.isPresent()) {
                    awaitPacing(pacing.get());
                    if (closed) {
                        return;
                    }
                }
                made = items.make(key);
            } finally {
                // one step: the item stops counting as being made as it starts counting as ready, so a fill on another
                // thread never sees neither and makes one more than the target
                synchronized (lock) {
                    making.merge(key, -1, Integer::sum);
                    Deque<T> queue = ready.get(key);
                    kept = made.isPresent() && !closed && queue != null; // a key dropped meanwhile takes no more
                    if (kept) {
                        queue.addLast(made.get());
                    }
                }
            }
            if (made.isEmpty()) {
                return;
            }
            if (!kept) {
                items.discard(made.get());
            }
        }
    }

    /**
     * Discards what each key holds beyond its {@link #target} now (the newest items first; the demand that grew it has
     * passed) and returns how many. Discards run on the calling thread, outside the pool's lock.
     */
    public int trim() throws InterruptedException {
        List<T> surplus = new ArrayList<>();
        synchronized (lock) {
            for (Map.Entry<K, Deque<T>> entry : ready.entrySet()) {
                int keep = target(entry.getKey());
                while (entry.getValue().size() > keep) {
                    surplus.add(entry.getValue().pollLast());
                }
            }
        }
        for (T item : surplus) {
            items.discard(item);
        }
        return surplus.size();
    }

    /**
     * Stops refilling and hands the ready items to the caller. {@code interrupt}: interrupts a make in progress
     * instead of waiting for it (for makes that clean up after themselves when interrupted). Idempotent: a second
     * call returns nothing.
     */
    public List<T> close(boolean interrupt) throws InterruptedException {
        Thread running;
        synchronized (lock) {
            closed = true;
            running = refill;
        }
        if (running != null) {
            if (interrupt) {
                running.interrupt();
            }
            running.join();
        }
        List<T> left = new ArrayList<>();
        synchronized (lock) {
            ready.values().forEach(left::addAll);
            ready.values().forEach(Deque::clear);
        }
        return left;
    }

    /** Whether {@link #close} was called. */
    public boolean closed() {
        return closed;
    }

    private void refillRounds() {
        try {
            while (true) {
                fill();
                synchronized (lock) {
                    if (!again || closed) {
                        refilling = false;
                        return;
                    }
                    again = false;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            synchronized (lock) {
                refilling = false;
            }
        }
    }

    /** Waits as {@code pacing} says, at most {@code maxDeferral}, returning early once the pool is closed. */
    private void awaitPacing(RefillPacing pacing) throws InterruptedException {
        long started = System.nanoTime();
        for (Duration delay = pacing.delay(started);
                !delay.isZero() && !closed;
                delay = pacing.delay(System.nanoTime())) {
            long waited = System.nanoTime() - started;
            if (waited >= maxDeferral.toNanos()) {
                break;
            }
            Thread.sleep(delay.compareTo(WAIT_SLICE) < 0 ? delay : WAIT_SLICE);
        }
        onPacingWaited.waited(Duration.ofNanos(System.nanoTime() - started));
    }
}
