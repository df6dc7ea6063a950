package io.agentenv.cli;

/** The server answered with an error status; {@link #getMessage()} is the server's {@code message}. */
final class ApiException extends RuntimeException {
    private final int status;

    ApiException(int status, String message) {
        super(message);
        this.status = status;
    }

    int status() {
        return status;
    }
}
