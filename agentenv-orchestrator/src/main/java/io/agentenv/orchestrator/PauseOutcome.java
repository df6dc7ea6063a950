package io.agentenv.orchestrator;

/** How a pause call ended; every value means the sandbox is PAUSED now. */
public enum PauseOutcome {
    /** This call paused it. */
    PAUSED,
    /** Another pause was in flight; this call waited for it to finish. */
    JOINED,
    /** It was already paused (E2B maps this to 409, which the SDK reads as "already paused"). */
    ALREADY_PAUSED
}
