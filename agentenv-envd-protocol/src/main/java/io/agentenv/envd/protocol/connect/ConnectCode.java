package io.agentenv.envd.protocol.connect;

import java.util.Locale;
import java.util.Optional;

/** Connect error codes: the string sent on the wire and the HTTP status used for unary errors. */
public enum ConnectCode {
    CANCELED(499),
    UNKNOWN(500),
    INVALID_ARGUMENT(400),
    DEADLINE_EXCEEDED(504),
    NOT_FOUND(404),
    ALREADY_EXISTS(409),
    PERMISSION_DENIED(403),
    RESOURCE_EXHAUSTED(429),
    FAILED_PRECONDITION(400),
    ABORTED(409),
    OUT_OF_RANGE(400),
    UNIMPLEMENTED(501),
    INTERNAL(500),
    UNAVAILABLE(503),
    DATA_LOSS(500),
    UNAUTHENTICATED(401);

    private final int httpStatus;

    ConnectCode(int httpStatus) {
        this.httpStatus = httpStatus;
    }

    /** The status a unary error response carries. */
    public int httpStatus() {
        return httpStatus;
    }

    /** The wire name, e.g. {@code "not_found"}. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Optional<ConnectCode> fromWireName(String name) {
        for (ConnectCode code : values()) {
            if (code.wireName().equals(name)) {
                return Optional.of(code);
            }
        }
        return Optional.empty();
    }

    /** How a Connect client derives a code from an HTTP status when the body carries none. */
    public static ConnectCode fromHttpStatus(int status) {
        return switch (status) {
            case 400 -> INTERNAL;
            case 401 -> UNAUTHENTICATED;
            case 403 -> PERMISSION_DENIED;
            case 404 -> UNIMPLEMENTED;
            case 429, 502, 503, 504 -> UNAVAILABLE;
            default -> UNKNOWN;
        };
    }
}
