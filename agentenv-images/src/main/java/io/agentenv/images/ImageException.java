package io.agentenv.images;

/**
 * Why a pull failed, one subclass per kind a caller answers differently (an HTTP API maps them to statuses: not
 * found 404, auth 401/403, unreachable 502, unsupported 422, failed 500). Messages never hold credentials.
 */
public abstract sealed class ImageException extends Exception {

    private static final long serialVersionUID = 1L;

    private ImageException(String message, Throwable cause) {
        super(message, cause);
    }

    /** The repository, tag or digest does not exist at the registry. */
    public static final class NotFound extends ImageException {
        private static final long serialVersionUID = 1L;

        public NotFound(String message) {
            super(message, null);
        }
    }

    /** The registry refused the credentials given, or wants credentials and none were given. */
    public static final class AuthFailed extends ImageException {
        private static final long serialVersionUID = 1L;

        public AuthFailed(String message) {
            super(message, null);
        }
    }

    /** The registry could not be reached: no such host, connection refused, timeout, TLS or plain-HTTP mismatch. */
    public static final class Unreachable extends ImageException {
        private static final long serialVersionUID = 1L;

        public Unreachable(String message) {
            super(message, null);
        }
    }

    /** The image exists but cannot be used here: no linux/amd64 image, or a manifest format that is not supported. */
    public static final class Unsupported extends ImageException {
        private static final long serialVersionUID = 1L;

        public Unsupported(String message) {
            super(message, null);
        }
    }

    /** Anything else: a tool failed (its stderr, trimmed and without credentials, is in the message), or I/O did. */
    public static final class Failed extends ImageException {
        private static final long serialVersionUID = 1L;

        public Failed(String message) {
            super(message, null);
        }

        public Failed(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
