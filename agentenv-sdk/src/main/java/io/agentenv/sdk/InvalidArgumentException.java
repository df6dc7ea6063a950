package io.agentenv.sdk;

/** An argument was refused, by this SDK before any request or by the server (HTTP 400, Connect {@code invalid_argument}). */
public class InvalidArgumentException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /** With a message. */
    public InvalidArgumentException(String message) {
        super(message);
    }

    /** Answered with HTTP {@code statusCode} (0: none). */
    public InvalidArgumentException(String message, int statusCode, Throwable cause) {
        super(message, statusCode, cause);
    }
}
