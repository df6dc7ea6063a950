package io.agentenv.envd.process;

import io.agentenv.envd.protocol.process.ProcessEvent;
import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One client's view of a process's events. Output is never blocked by a slow client: when more than
 * {@link #MAX_PENDING_BYTES} wait unsent, the subscription is cut with {@link Item.Overflow}.
 */
final class Subscription implements AutoCloseable {
    static final long MAX_PENDING_BYTES = 16L << 20;

    sealed interface Item {
        record Data(ProcessEvent.DataEvent event, int size) implements Item {}

        record End(ProcessEvent.EndEvent event) implements Item {}

        record Overflow() implements Item {}
    }

    private final LinkedBlockingQueue<Item> queue = new LinkedBlockingQueue<>();
    private final AtomicLong pendingBytes = new AtomicLong();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Runnable onClose;

    Subscription(Runnable onClose) {
        this.onClose = onClose;
    }

    static Subscription ended(ProcessEvent.EndEvent end) {
        Subscription s = new Subscription(() -> {});
        s.queue.add(new Item.End(end));
        return s;
    }

    void offerData(ProcessEvent.DataEvent event, int size) {
        if (closed.get()) {
            return;
        }
        if (pendingBytes.addAndGet(size) > MAX_PENDING_BYTES) {
            queue.add(new Item.Overflow());
            close();
            return;
        }
        queue.add(new Item.Data(event, size));
    }

    void offerEnd(ProcessEvent.EndEvent end) {
        if (!closed.get()) {
            queue.add(new Item.End(end));
        }
    }

    /** The next item, or null when none arrived within {@code timeout}. */
    Item poll(Duration timeout) throws InterruptedException {
        Item item = queue.poll(Math.max(0, timeout.toNanos()), TimeUnit.NANOSECONDS);
        if (item instanceof Item.Data data) {
            pendingBytes.addAndGet(-data.size());
        }
        return item;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            onClose.run();
        }
    }
}
