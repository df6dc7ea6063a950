package io.agentenv.server.api;

import io.agentenv.orchestrator.ErrorKind;

/** The only place that turns an {@link ErrorKind} into an HTTP status (E2B compatibility is settled in this table). */
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
}
