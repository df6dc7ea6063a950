package io.agentenv.server.api;

import io.agentenv.orchestrator.ErrorKind;
import io.agentenv.volumes.VolumeException;

/**
 * The only place that turns an {@link ErrorKind} or a {@link VolumeException.Kind} into an HTTP status (E2B
 * compatibility is settled in these tables).
 */
final class ErrorStatus {
    private ErrorStatus() {}

    static int of(ErrorKind kind) {
        return switch (kind) { // exhaustive: a new ErrorKind does not compile until it is mapped here
            case INVALID_ARGUMENT -> 400;
            case NOT_FOUND -> 404;
            case CONFLICT -> 409;
            case RESOURCE_EXHAUSTED -> 429;
            case INTERNAL -> 500;
            case UPSTREAM_FAILED -> 502;
            case UNAVAILABLE -> 503;
        };
    }

    static int of(VolumeException.Kind kind) {
        return switch (kind) {
            case INVALID_ARGUMENT -> 400;
            case UNAUTHENTICATED -> 401;
            case NOT_FOUND -> 404;
            case CONFLICT -> 409;
            case INTERNAL -> 500;
            case UNAVAILABLE -> 503;
            case NO_SPACE -> 507; // Insufficient Storage
        };
    }
}
