package io.agentenv.orchestrator;

/** The store could not read or make a change durable; the change did not happen. */
public final class StoreException extends RuntimeException {
    public StoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
