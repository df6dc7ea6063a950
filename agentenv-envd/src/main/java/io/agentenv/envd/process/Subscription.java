package io.agentenv.envd.process;

import io.agentenv.envd.protocol.process.ProcessEvent;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One client's view of a process's events. Output is flow-controlled: when more than {@link #MAX_PENDING_BYTES} wait
 * unsent, the process's output reader waits for this client (as a pipe would make the process wait), so a fast
 * producer is slowed down rather than cut off. A client that does not make room for {@link #STALL_LIMIT} is cut with
 * {@link Item.Overflow} so that a vanished client cannot stall the process for ever.
 */
final class Subscription implements AutoCloseable {
    static final long MAX_PENDING_BYTES = 4L << 20;
    static final Duration STALL_LIMIT = Duration.ofSeconds(30);

    sealed interface Item {
        record Data(ProcessEvent.DataEvent event, int size) implements Item {}

        record End(ProcessEvent.EndEvent event) implements Item {}

        record Overflow() implements Item {}
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final Deque<Item> queue = new ArrayDeque<>(); // guarded by lock
    private long pendingBytes; // guarded by lock
    private boolean closed; // guarded by lock
    private final Runnable onClose;
    private final long maxPendingBytes;
    private final Duration stallLimit;

    Subscription(Runnable onClose) {
        this(onClose, MAX_PENDING_BYTES, STALL_LIMIT);
    }

    Subscription(Runnable onClose, long maxPendingBytes, Duration stallLimit) {
        this.onClose = onClose;
        this.maxPendingBytes = maxPendingBytes;
        this.stallLimit = stallLimit;
    }

    static Subscription ended(ProcessEvent.EndEvent end) {
        Subscription s = new Subscription(() -> {});
        s.queue.add(new Item.End(end));
        return s;
    }

    /** Queues output, waiting while this client is {@link #MAX_PENDING_BYTES} behind (at most {@link #STALL_LIMIT}). */
    void offerData(ProcessEvent.DataEvent event, int size) throws InterruptedException {
        boolean overflowed = false;
        lock.lock();
        try {
            long waitNanos = stallLimit.toNanos();
            while (!closed && pendingBytes > 0 && pendingBytes + size > maxPendingBytes) {
                if (waitNanos <= 0) {
                    queue.add(new Item.Overflow());
                    changed.signalAll();
                    overflowed = true;
                    break;
                }
                waitNanos = changed.awaitNanos(waitNanos);
            }
            if (!closed && !overflowed) {
                pendingBytes += size;
                queue.add(new Item.Data(event, size));
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
        if (overflowed) {
            close();
        }
    }

    void offerEnd(ProcessEvent.EndEvent end) {
        lock.lock();
        try {
            if (!closed) {
                queue.add(new Item.End(end));
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /** The next item, or null when none arrived within {@code timeout}. Items queued before a close are still read. */
    Item poll(Duration timeout) throws InterruptedException {
        lock.lock();
        try {
            long waitNanos = Math.max(0, timeout.toNanos());
            while (queue.isEmpty()) {
                if (waitNanos <= 0) {
                    return null;
                }
                waitNanos = changed.awaitNanos(waitNanos);
            }
            Item item = queue.removeFirst();
            if (item instanceof Item.Data data) {
                pendingBytes -= data.size();
                changed.signalAll();
            }
            return item;
        } finally {
            lock.unlock();
        }
    }

    /** True when an item is queued now (a {@link #poll} would not wait). */
    boolean hasPending() {
        lock.lock();
        try {
            return !queue.isEmpty();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            changed.signalAll(); // release an output reader waiting for room
        } finally {
            lock.unlock();
        }
        onClose.run();
    }
}
