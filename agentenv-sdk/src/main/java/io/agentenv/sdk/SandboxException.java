package io.agentenv.sdk;

import java.util.OptionalInt;

/**
 * The base of every failure this SDK reports (unchecked). Subclasses name the kind; {@link #statusCode()} is the HTTP
 * status of the answer that caused it, when there was one.
 */
public class SandboxException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int statusCode;

    /** A failure without an HTTP status. */
    public SandboxException(String message) {
        this(message, 0, null);
    }

    /** A failure caused by {@code cause}. */
    public SandboxException(String message, Throwable cause) {
        this(message, 0, cause);
    }

    /** A failure answered with HTTP {@code statusCode} (0: none). */
    public SandboxException(String message, int statusCode, Throwable cause) {
        super(message, cause);
        this.statusCode = statusCode;
    }

    /** The HTTP status of the answer that caused this, if any. */
    public OptionalInt statusCode() {
        return statusCode == 0 ? OptionalInt.empty() : OptionalInt.of(statusCode);
    }
}
