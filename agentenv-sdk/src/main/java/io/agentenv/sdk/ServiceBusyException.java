package io.agentenv.sdk;

/** The server is busy or shutting down (HTTP 503); retry later. */
public class ServiceBusyException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /** With a message. */
    public ServiceBusyException(String message) {
        super(message);
    }

    /** Answered with HTTP {@code statusCode} (0: none). */
    public ServiceBusyException(String message, int statusCode, Throwable cause) {
        super(message, statusCode, cause);
    }
}
