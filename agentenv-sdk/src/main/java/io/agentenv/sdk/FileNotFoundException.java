package io.agentenv.sdk;

/** A file or directory in the sandbox does not exist. */
public class FileNotFoundException extends NotFoundException {
    private static final long serialVersionUID = 1L;

    /** With a message. */
    public FileNotFoundException(String message) {
        super(message);
    }

    /** Answered with HTTP {@code statusCode} (0: none). */
    public FileNotFoundException(String message, int statusCode, Throwable cause) {
        super(message, statusCode, cause);
    }
}
