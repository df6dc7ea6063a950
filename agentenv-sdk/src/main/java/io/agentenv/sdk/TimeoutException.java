package io.agentenv.sdk;

/** A deadline passed: a command's or watch's timeout, the request timeout, or the sandbox is no longer running (it was killed, paused or reached its end of life while the request was in flight). */
public class TimeoutException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /** With a message. */
    public TimeoutException(String message) {
        super(message);
    }

    /** Answered with HTTP {@code statusCode} (0: none). */
    public TimeoutException(String message, int statusCode, Throwable cause) {
        super(message, statusCode, cause);
    }
}
