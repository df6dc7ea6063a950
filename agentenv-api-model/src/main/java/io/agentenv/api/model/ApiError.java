package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

/**
 * E2B schema {@code Error}: every error response body, {@code {"code": <http status>, "message": "..."}}. The SDK
 * reads {@code code} (not only the HTTP status) for its soft outcomes, so it always equals the status.
 */
public record ApiError(int code, String message) {
    public ApiError {
        requireNonNull(message, "message is null");
        if (code < 400 || code > 599) {
            throw new IllegalArgumentException("code must be an HTTP error status: " + code);
        }
    }
}
