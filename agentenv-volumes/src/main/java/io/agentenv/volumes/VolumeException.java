package io.agentenv.volumes;

import static java.util.Objects.requireNonNull;

/**
 * A volume operation refused or failed; the message is safe to show to the client. The server maps {@link Kind} to
 * an HTTP status in one place.
 */
public final class VolumeException extends RuntimeException {
    /** What went wrong, independent of transport. */
    public enum Kind {
        /** A bad name, size, path or parameter. */
        INVALID_ARGUMENT,
        /** The volume's token is missing or does not match. */
        UNAUTHENTICATED,
        /** The volume, or the path inside it, does not exist. */
        NOT_FOUND,
        /** The name is taken, the path exists, or the volume is in use. */
        CONFLICT,
        /** The volume is full. */
        NO_SPACE,
        /** This host cannot keep volumes (for example no loop mounts). */
        UNAVAILABLE,
        /** The storage failed; the cause is only logged. */
        INTERNAL
    }

    private final Kind kind;

    public VolumeException(Kind kind, String message) {
        this(kind, message, null);
    }

    public VolumeException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = requireNonNull(kind, "kind is null");
    }

    public Kind kind() {
        return kind;
    }

    public static VolumeException invalid(String message) {
        return new VolumeException(Kind.INVALID_ARGUMENT, message);
    }

    public static VolumeException notFound(String message) {
        return new VolumeException(Kind.NOT_FOUND, message);
    }

    public static VolumeException conflict(String message) {
        return new VolumeException(Kind.CONFLICT, message);
    }
}
