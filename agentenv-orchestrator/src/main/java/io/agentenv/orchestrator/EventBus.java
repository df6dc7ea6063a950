package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Delivers lifecycle events to listeners in publication order on one thread, never under a caller's lock. */
final class EventBus implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EventBus.class);

    private final List<LifecycleListener> listeners;
    private final ExecutorService delivery = Executors.newSingleThreadExecutor(
            Thread.ofVirtual().name("aenv-lifecycle-events").factory());

    EventBus(List<LifecycleListener> listeners) {
        this.listeners = new CopyOnWriteArrayList<>(listeners);
    }

    /** Adds a listener for the events published from now on (for parts built after the orchestrator). */
    void subscribe(LifecycleListener listener) {
        listeners.add(requireNonNull(listener, "listener is null"));
    }

    void publish(LifecycleEvent event) {
        if (listeners.isEmpty()) {
            return;
        }
        try {
            delivery.execute(() -> deliver(event));
        } catch (RejectedExecutionException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", event.sandbox().value())
                    .addKeyValue("event", event)
                    .log("lifecycle event dropped after shutdown");
        }
    }

    private void deliver(LifecycleEvent event) {
        for (LifecycleListener listener : listeners) {
            try {
                listener.onEvent(event);
            } catch (RuntimeException e) {
                log.atWarn()
                        .addKeyValue("sandbox_id", event.sandbox().value())
                        .setCause(e)
                        .log("lifecycle listener failed");
            }
        }
    }

    /** Delivers what was published, then stops. */
    @Override
    public void close() {
        delivery.shutdown();
        try {
            if (!delivery.awaitTermination(Duration.ofSeconds(10).toMillis(), TimeUnit.MILLISECONDS)) {
                delivery.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            delivery.shutdownNow();
        }
    }
}
