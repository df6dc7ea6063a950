package io.agentenv.spi;

/**
 * A call to envd failed. {@link Unreachable}: no answer (connection refused or reset, timeout, the handle is closed);
 * {@link Rejected}: envd answered with an error status. Messages go to logs, never to API clients; they never contain
 * the access token.
 */
public abstract sealed class EnvdException extends Exception permits EnvdException.Unreachable, EnvdException.Rejected {

    private EnvdException(String message, Throwable cause) {
        super(message, cause);
    }

    /** envd did not answer in time or at all. */
    public static final class Unreachable extends EnvdException {
        public Unreachable(String message, Throwable cause) {
            super(message, cause);
        }

        public Unreachable(String message) {
            this(message, null);
        }
    }

    /** envd answered {@code status} (4xx or 5xx, or an unexpected status or body). */
    public static final class Rejected extends EnvdException {
        private final int status;

        public Rejected(int status, String message, Throwable cause) {
            super(message, cause);
            this.status = status;
        }

        public Rejected(int status, String message) {
            this(status, message, null);
        }

        /** The HTTP status envd answered, or 0 when the status was fine but the body could not be read. */
        public int status() {
            return status;
        }
    }
}
