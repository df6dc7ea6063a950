package io.agentenv.sdk;

/** The API key (or the sandbox's access token, a user name or a URL signature) was refused (HTTP 401), or no API key was configured. */
public class AuthenticationException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /** With a message. */
    public AuthenticationException(String message) {
        super(message);
    }

    /** Answered with HTTP {@code statusCode} (0: none). */
    public AuthenticationException(String message, int statusCode, Throwable cause) {
        super(message, statusCode, cause);
    }
}
