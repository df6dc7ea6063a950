package io.agentenv.orchestrator;

import io.agentenv.spi.SandboxId;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * Per-sandbox change notifications, so an operation can wait for another one's transition without polling. A waiter
 * registers before it reads the store, so a change between its read and its wait is never missed.
 */
final class StateSignals {
    private final Object monitor = new Object();
    private final Map<SandboxId, Signal> signals = new HashMap<>();

    private static final class Signal {
        final ReentrantLock lock = new ReentrantLock();
        final Condition changed = lock.newCondition();
        long version;
        int waiters;
    }

    /** Wakes everyone waiting on {@code id}. Call after every durable change of its record. */
    void changed(SandboxId id) {
        Signal signal;
        synchronized (monitor) {
            signal = signals.get(id);
        }
        if (signal == null) {
            return;
        }
        signal.lock.lock();
        try {
            signal.version++;
            signal.changed.signalAll();
        } finally {
            signal.lock.unlock();
        }
    }

    /**
     * Calls {@code check} until it yields a value, waiting for a change of {@code id} between calls. Empty when
     * {@code deadlineNanos} (a {@link System#nanoTime()} value) passes first.
     */
    <T> Optional<T> await(SandboxId id, long deadlineNanos, Supplier<Optional<T>> check) throws InterruptedException {
        Signal signal;
        synchronized (monitor) {
            signal = signals.computeIfAbsent(id, k -> new Signal());
            signal.waiters++;
        }
        try {
            while (true) {
                long seen;
                signal.lock.lock();
                try {
                    seen = signal.version;
                } finally {
                    signal.lock.unlock();
                }
                Optional<T> result = check.get(); // store I/O, no lock held
                if (result.isPresent()) {
                    return result;
                }
                signal.lock.lock();
                try {
                    while (signal.version == seen) {
                        long left = deadlineNanos - System.nanoTime();
                        if (left <= 0) {
                            return Optional.empty();
                        }
                        signal.changed.awaitNanos(left);
                    }
                } finally {
                    signal.lock.unlock();
                }
            }
        } finally {
            synchronized (monitor) {
                if (--signal.waiters == 0) {
                    signals.remove(id, signal);
                }
            }
        }
    }

    static long deadline(Duration wait) {
        return System.nanoTime() + TimeUnit.NANOSECONDS.convert(wait);
    }

    Object monitor() {
        return monitor;
    }
}
