package io.agentenv.orchestrator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/** Collects lifecycle events; tests wait for one with a deadline instead of sleeping. */
final class RecordingListener implements LifecycleListener {
    private final List<LifecycleEvent> events = new ArrayList<>();

    @Override
    public synchronized void onEvent(LifecycleEvent event) {
        events.add(event);
        notifyAll();
    }

    synchronized List<LifecycleEvent> events() {
        return List.copyOf(events);
    }

    synchronized LifecycleEvent await(Predicate<LifecycleEvent> wanted, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            for (LifecycleEvent event : events) {
                if (wanted.test(event)) {
                    return event;
                }
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("no matching lifecycle event within " + timeout + "; saw " + events);
            }
            wait(Math.max(1, left / 1_000_000));
        }
    }
}
