package io.agentenv.envd.http;

import static java.util.Objects.requireNonNull;

/**
 * An HTTP error for a plain route, sent as {@code {"code":<status>,"message":"..."}} (integer code, as E2B's envd does).
 * The message goes to the client: no secrets, no internal paths beyond what the client sent.
 */
public final class HttpException extends RuntimeException {
    private final int status;

    public HttpException(int status, String message) {
        super(requireNonNull(message, "message is null"));
        if (status < 400 || status > 599) {
            throw new IllegalArgumentException("not an error status: " + status);
        }
        this.status = status;
    }

    public int status() {
        return status;
    }

    public static HttpException badRequest(String message) {
        return new HttpException(400, message);
    }

    public static HttpException unauthorized(String message) {
        return new HttpException(401, message);
    }

    public static HttpException notFound(String message) {
        return new HttpException(404, message);
    }
}
