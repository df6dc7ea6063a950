package io.agentenv.sdk;

/** The sandbox's disk is full (HTTP 507 from envd's file API). */
public class NotEnoughSpaceException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /** With a message. */
    public NotEnoughSpaceException(String message) {
        super(message);
    }

    /** Answered with HTTP {@code statusCode} (0: none). */
    public NotEnoughSpaceException(String message, int statusCode, Throwable cause) {
        super(message, statusCode, cause);
    }
}
