package io.agentenv.orchestrator;

/**
 * Receives lifecycle events. Called on the orchestrator's event thread, in order, never under a lock; a listener that
 * throws is logged and does not affect the operation or other listeners. Must not block for long.
 */
@FunctionalInterface
public interface LifecycleListener {
    void onEvent(LifecycleEvent event);
}
