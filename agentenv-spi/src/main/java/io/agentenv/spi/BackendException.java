package io.agentenv.spi;

/**
 * A backend operation failed. {@link Recoverable}: the sandbox is in the state it was before the call (for pause and
 * snapshot: running again), so the operation may be retried. {@link Terminal}: the instance is unusable and the caller
 * must {@link SandboxBackend#close()} it. Messages go to logs, never to API clients.
 */
public abstract sealed class BackendException extends Exception
        permits BackendException.Recoverable, BackendException.Terminal {

    private BackendException(String message, Throwable cause) {
        super(message, cause);
    }

    public static final class Recoverable extends BackendException {
        public Recoverable(String message, Throwable cause) {
            super(message, cause);
        }

        public Recoverable(String message) {
            this(message, null);
        }
    }

    public static final class Terminal extends BackendException {
        public Terminal(String message, Throwable cause) {
            super(message, cause);
        }

        public Terminal(String message) {
            this(message, null);
        }
    }
}
