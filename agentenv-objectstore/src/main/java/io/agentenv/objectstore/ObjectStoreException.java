package io.agentenv.objectstore;

/**
 * Why a store operation failed, one subclass per kind a caller answers differently: a missing object, bytes that do
 * not match what was written, a store that cannot be reached (worth retrying later, or on another path), and anything
 * else.
 */
public abstract sealed class ObjectStoreException extends Exception {

    private static final long serialVersionUID = 1L;

    private ObjectStoreException(String message, Throwable cause) {
        super(message, cause);
    }

    /** No object has the key. */
    public static final class NotFound extends ObjectStoreException {
        private static final long serialVersionUID = 1L;

        public NotFound(ObjectKey key) {
            super("no object " + key, null);
        }
    }

    /**
     * The object's bytes do not match the size and SHA-256 recorded when it was written (or it has no record of
     * them). Nothing read was kept.
     */
    public static final class Corrupt extends ObjectStoreException {
        private static final long serialVersionUID = 1L;

        public Corrupt(String message) {
            super(message, null);
        }
    }

    /**
     * The store could not be reached or did not answer in time: connection refused, timeouts, a server error after
     * the retries, a shared directory that is not mounted.
     */
    public static final class Unavailable extends ObjectStoreException {
        private static final long serialVersionUID = 1L;

        public Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Anything else: refused by the store (permissions, a missing bucket), local I/O, content that changed. */
    public static final class Failed extends ObjectStoreException {
        private static final long serialVersionUID = 1L;

        public Failed(String message) {
            super(message, null);
        }

        public Failed(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
