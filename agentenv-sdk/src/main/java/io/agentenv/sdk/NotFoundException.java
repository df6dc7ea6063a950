package io.agentenv.sdk;

/** Something named in the request does not exist (HTTP 404, Connect {@code not_found}). */
public class NotFoundException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /** With a message. */
    public NotFoundException(String message) {
        super(message);
    }

    /** Answered with HTTP {@code statusCode} (0: none). */
    public NotFoundException(String message, int statusCode, Throwable cause) {
        super(message, statusCode, cause);
    }
}
