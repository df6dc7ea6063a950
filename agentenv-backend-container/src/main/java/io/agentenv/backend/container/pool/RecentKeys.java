package io.agentenv.backend.container.pool;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Which keys a bounded cache holds: at most {@code capacity}, by recent use. A key not held takes the place of the
 * least recently used one when that one has not been used for {@code idleBeforeEviction}; until then it is refused, so
 * that a few more keys than fit, used in turn, do not evict each other on every use. Thread-safe.
 */
public final class RecentKeys<K> {

    /** What a {@link #use} decided: whether the key is held now, and the key it took the place of. */
    public record Use<K>(boolean held, Optional<K> evicted) {
        public Use {
            requireNonNull(evicted, "evicted is null");
        }
    }

    private final int capacity;
    private final Duration idleBeforeEviction;
    /** Held keys and their last use, least recently used first. Guarded by this. */
    private final LinkedHashMap<K, Instant> lastUse = new LinkedHashMap<>(16, 0.75f, true);

    public RecentKeys(int capacity, Duration idleBeforeEviction) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must be >= 0: " + capacity);
        }
        this.capacity = capacity;
        this.idleBeforeEviction = requireNonNull(idleBeforeEviction, "idleBeforeEviction is null");
    }

    /** Records a use of {@code key} at {@code now} and says whether it is held (and what it evicted to be). */
    public synchronized Use<K> use(K key, Instant now) {
        requireNonNull(key, "key is null");
        requireNonNull(now, "now is null");
        if (lastUse.containsKey(key)) {
            lastUse.put(key, now);
            return new Use<>(true, Optional.empty());
        }
        if (lastUse.size() < capacity) {
            lastUse.put(key, now);
            return new Use<>(true, Optional.empty());
        }
        Iterator<Map.Entry<K, Instant>> oldest = lastUse.entrySet().iterator();
        if (!oldest.hasNext()) {
            return new Use<>(false, Optional.empty());
        }
        Map.Entry<K, Instant> eldest = oldest.next();
        if (eldest.getValue().plus(idleBeforeEviction).isAfter(now)) {
            return new Use<>(false, Optional.empty());
        }
        K evicted = eldest.getKey();
        oldest.remove();
        lastUse.put(key, now);
        return new Use<>(true, Optional.of(evicted));
    }

    /** Stops holding {@code key}; false if it was not held. */
    public synchronized boolean forget(K key) {
        return lastUse.remove(key) != null;
    }

    /** Whether {@code key} is held. */
    public synchronized boolean holds(K key) {
        return lastUse.containsKey(key);
    }
}
