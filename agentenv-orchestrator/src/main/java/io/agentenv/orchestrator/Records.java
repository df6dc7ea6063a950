package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.SandboxId;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The store plus change signals: every successful write wakes the sandbox's waiters. Operations use this, never the
 * store directly, so no change goes unsignalled.
 *
 * <p>It also keeps the records that {@link #cachedVisible} read (the sandbox proxy's lookup on every request) in
 * memory. Every successful write drops the sandbox's entry before its waiters are woken, in the same call, so a read
 * that starts after a write returned never sees the record from before it. A fill races writes safely: it is kept only
 * if no write finished since its store read began ({@link #writes}, compared under the map's per-key lock). The ids of
 * the RUNNING sandboxes ({@link #runningIds}, which the liveness check and the metrics sampler read every round) are
 * kept the same way: tagged with the write count seen before their store read, served while it has not changed.
 */
final class Records {
    private final SandboxStore store;
    private final StateSignals signals;
    private final ConcurrentHashMap<SandboxId, SandboxRecord> cached = new ConcurrentHashMap<>();
    /** Counts finished writes; a cache fill that saw another value before its store read is not kept. */
    private final AtomicLong writes = new AtomicLong();
    /** The last read of the RUNNING ids, or null; valid while {@link #writes} still equals its tag. */
    private volatile RunningIds running;

    private record RunningIds(long writesBefore, Set<SandboxId> ids) {
        RunningIds {
            ids = Set.copyOf(ids);
        }
    }

    Records(SandboxStore store, StateSignals signals) {
        this.store = requireNonNull(store, "store is null");
        this.signals = requireNonNull(signals, "signals is null");
    }

    Object signalMonitor() {
        return signals.monitor();
    }

    SandboxStore store() {
        return store;
    }

    Optional<SandboxRecord> get(SandboxId id) {
        return store.get(id);
    }

    /**
     * Ids of the RUNNING sandboxes as of the last write that returned (never older): one store read for all, kept until
     * the next write, so rounds of the liveness check and the metrics sampler between two writes read the store once.
     * A write that finishes during the store read leaves the result unkept (its tag is older than the write count).
     */
    Set<SandboxId> runningIds() {
        long seen = writes.get();
        RunningIds hit = running;
        if (hit != null && hit.writesBefore() == seen) {
            return hit.ids();
        }
        RunningIds read = new RunningIds(seen, store.idsIn(SandboxState.RUNNING));
        running = read;
        return read.ids();
    }

    /** The record if it exists and is not being killed; NOT_FOUND otherwise. */
    SandboxRecord visible(SandboxId id) {
        return store.get(id)
                .filter(r -> r.state() != SandboxState.KILLING)
                .orElseThrow(() -> AgentEnvException.notFound(id));
    }

    /**
     * As {@link #visible}, from memory after the first read: the record as of the last write that returned (never one
     * older). Missing and KILLING records are not kept (NOT_FOUND reads the store each time).
     */
    SandboxRecord cachedVisible(SandboxId id) {
        SandboxRecord hit = cached.get(id);
        if (hit != null) {
            return hit;
        }
        long seen = writes.get();
        SandboxRecord read = visible(id);
        cached.compute(id, (k, current) -> writes.get() == seen ? read : current);
        return read;
    }

    /** How many records {@link #cachedVisible} keeps (for tests). */
    int cachedCount() {
        return cached.size();
    }

    void insert(SandboxRecord record, SandboxStore.Durability durability) {
        store.insert(record, durability);
        changed(record.id());
    }

    boolean cas(SandboxId id, Set<SandboxState> from, SandboxState to) {
        boolean done = store.transition(id, from, to);
        if (done) {
            changed(id);
        }
        return done;
    }

    boolean cas(SandboxId id, SandboxState from, SandboxState to) {
        return cas(id, EnumSet.of(from), to);
    }

    boolean replace(SandboxRecord record, SandboxState expected) {
        boolean done = store.replace(record, EnumSet.of(expected));
        if (done) {
            changed(record.id());
        }
        return done;
    }

    boolean updateTtl(SandboxId id, SandboxState expected, Duration timeout, Optional<Instant> expiresAt) {
        boolean done = store.updateTtl(id, EnumSet.of(expected), timeout, expiresAt);
        if (done) {
            changed(id);
        }
        return done;
    }

    boolean updateNetwork(SandboxId id, Set<SandboxState> expected, NetworkPolicy network) {
        boolean done = store.updateNetwork(id, expected, network);
        if (done) {
            changed(id);
        }
        return done;
    }

    boolean updateCustomExtensionParams(SandboxId id, SandboxState expected, String params) {
        boolean done = store.updateCustomExtensionParams(id, EnumSet.of(expected), params);
        if (done) {
            changed(id);
        }
        return done;
    }

    boolean delete(SandboxId id, Set<SandboxState> expected) {
        boolean done = store.delete(id, expected);
        if (done) {
            changed(id);
        }
        return done;
    }

    /** After every durable write of {@code id}'s record: drop what the cache holds, then wake the waiters. */
    private void changed(SandboxId id) {
        writes.incrementAndGet();
        cached.remove(id);
        signals.changed(id);
    }

    /**
     * Waits until the sandbox is no longer in {@code state} (or is gone). CONFLICT when {@code deadlineNanos} passes
     * first: the transition is taking longer than the bounded wait.
     */
    void awaitLeaving(SandboxId id, SandboxState state, long deadlineNanos) {
        try {
            Optional<Boolean> left = signals.await(
                    id,
                    deadlineNanos,
                    () -> store.get(id)
                                    .map(SandboxRecord::state)
                                    .filter(s -> s == state)
                                    .isPresent()
                            ? Optional.empty()
                            : Optional.of(Boolean.TRUE));
            if (left.isEmpty()) {
                throw new AgentEnvException(
                        ErrorKind.CONFLICT,
                        "sandbox " + id + " is still " + state.name().toLowerCase(Locale.ROOT) + "; try again later");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AgentEnvException(ErrorKind.UNAVAILABLE, "interrupted while waiting for sandbox " + id, e);
        }
    }
}
