package io.agentenv.sdk;

/** The sandbox does not exist (killed, expired or never created), or is not running where a running one is needed. */
public class SandboxNotFoundException extends NotFoundException {
    private static final long serialVersionUID = 1L;

    /** With a message. */
    public SandboxNotFoundException(String message) {
        super(message);
    }

    /** Answered with HTTP {@code statusCode} (0: none). */
    public SandboxNotFoundException(String message, int statusCode, Throwable cause) {
        super(message, statusCode, cause);
    }
}
