package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

/**
 * A backend operation failed. {@link Recoverable}: the sandbox is in the state it was before the call (for pause and
 * snapshot: running again), so the operation may be retried. {@link Exhausted} is the recoverable failure of a launch
 * that hit a capacity limit of the backend. {@link Terminal}: the instance is unusable and the caller must
 * {@link SandboxBackend#close()} it. Messages go to logs, never to API clients.
 */
public abstract sealed class BackendException extends Exception
        permits BackendException.Recoverable, BackendException.Terminal {

    private BackendException(String message, Throwable cause) {
        super(message, cause);
    }

    public static sealed class Recoverable extends BackendException permits Exhausted {
        public Recoverable(String message, Throwable cause) {
            super(message, cause);
        }

        public Recoverable(String message) {
            this(message, null);
        }
    }

    /**
     * A capacity limit of the backend is reached (for example every network slot is in use), so nothing was started
     * and nothing was reserved; a retry can succeed once sandboxes are killed or paused.
     */
    public static final class Exhausted extends Recoverable {
        private final String limit;

        /**
         * @param limit names the limit that was hit, in words safe for API clients (no paths, commands or output),
         *              e.g. {@code "all 16 sandbox slots are in use (AENV_BACKEND_MAX_SANDBOXES)"}
         */
        public Exhausted(String limit, String message, Throwable cause) {
            super(message, cause);
            this.limit = requireNonNull(limit, "limit is null");
            if (limit.isBlank()) {
                throw new IllegalArgumentException("limit is blank");
            }
        }

        public String limit() {
            return limit;
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
