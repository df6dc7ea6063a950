package io.agentenv.orchestrator;

/** What happens to a RUNNING sandbox when its TTL runs out (E2B lifecycle.onTimeout / autoPause). */
public enum TimeoutAction {
    PAUSE,
    KILL
}
