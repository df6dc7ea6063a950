package io.agentenv.envd.filesystem;

/** Why a filesystem operation failed; the RPC and HTTP layers each map it to their status codes in one place. */
public enum FsError {
    INVALID_ARGUMENT,
    NOT_FOUND,
    ALREADY_EXISTS,
    PERMISSION_DENIED,
    FAILED_PRECONDITION,
    /** The disk (blocks or inodes) is full. */
    NO_SPACE,
    RESOURCE_EXHAUSTED,
    INTERNAL
}
