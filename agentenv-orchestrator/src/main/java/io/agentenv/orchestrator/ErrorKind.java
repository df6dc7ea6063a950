package io.agentenv.orchestrator;

/** What went wrong, independent of transport. Only {@code api.ErrorStatus} turns a kind into an HTTP status. */
public enum ErrorKind {
    /** The request itself is wrong (bad value, unknown template, params without a configured extension). */
    INVALID_ARGUMENT,
    /** The sandbox, snapshot or template does not exist (a sandbox being killed counts as not existing). */
    NOT_FOUND,
    /** The sandbox is in a state that does not allow the operation, or a bounded wait for a transition ran out. */
    CONFLICT,
    /** A limit was hit (for example too many concurrent forks). */
    RESOURCE_EXHAUSTED,
    /** The backend or the store failed; the message is safe to show, the cause is only logged. */
    INTERNAL,
    /** A collaborator outside the server (custom extension, envd) refused or failed. */
    UPSTREAM_FAILED,
    /** The server is shutting down and accepts no new lifecycle operations. */
    UNAVAILABLE
}
