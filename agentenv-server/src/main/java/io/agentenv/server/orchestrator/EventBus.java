package io.agentenv.server.orchestrator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/** Delivers lifecycle events to listeners in publication order on one thread, never under a caller's lock. */
final class EventBus implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EventBus.class);

    private final List<LifecycleListener> listeners;
    private final ExecutorService delivery =
            Executors.newSingleThreadExecutor(Thread.ofVirtual().name("aenv-lifecycle-events").factory());

    EventBus(List<LifecycleListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    void publish(LifecycleEvent event) {
        if (listeners.isEmpty()) {
            return;
        }
        try {
            delivery.execute(() -> deliver(event));
        } catch (RejectedExecutionException e) {
            log.atWarn().addKeyValue("sandbox_id", event.sandbox().value()).addKeyValue("event", event)
                    .log("lifecycle event dropped after shutdown");
        }
    }

    private void deliver(LifecycleEvent event) {
        for (LifecycleListener listener : listeners) {
            try {
                listener.onEvent(event);
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("sandbox_id", event.sandbox().value()).setCause(e).log("lifecycle listener failed");
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
