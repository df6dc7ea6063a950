package io.agentenv.envd.client;

/**
 * A call of {@link ProxiedEnvdClient} failed: the proxy or envd answered with an error status (its {@code message} is
 * this exception's message), or the call did not get an answer (status 0).
 */
public final class EnvdCallException extends RuntimeException {
    private final int status;

    public EnvdCallException(int status, String message) {
        super(message);
        this.status = status;
    }

    /** The HTTP status, 0 when there was no answer. */
    public int status() {
        return status;
    }
}
