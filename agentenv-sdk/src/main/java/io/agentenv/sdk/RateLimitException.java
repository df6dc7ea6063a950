package io.agentenv.sdk;

/** Too many requests or sandboxes (HTTP 429, Connect {@code resource_exhausted}); on this server: all sandbox slots are in use. */
public class RateLimitException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /** With a message. */
    public RateLimitException(String message) {
        super(message);
    }

    /** Answered with HTTP {@code statusCode} (0: none). */
    public RateLimitException(String message, int statusCode, Throwable cause) {
        super(message, statusCode, cause);
    }
}
