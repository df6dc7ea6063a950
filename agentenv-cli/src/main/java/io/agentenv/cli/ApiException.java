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

    /** An exception's message for the user: its class name when it has none. */
    static String describe(Exception e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
