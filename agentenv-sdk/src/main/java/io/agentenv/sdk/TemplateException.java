package io.agentenv.sdk;

/** The template or the envd version in the sandbox does not support the request. */
public class TemplateException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /** With a message. */
    public TemplateException(String message) {
        super(message);
    }

    /** Answered with HTTP {@code statusCode} (0: none). */
    public TemplateException(String message, int statusCode, Throwable cause) {
        super(message, statusCode, cause);
    }
}
