package io.agentenv.server.api;

/**
 * A transport-level failure that has no domain {@link io.agentenv.orchestrator.ErrorKind}: unknown route,
 * wrong method, missing credentials, oversized body. The message is sent to the client.
 */
final class HttpProblem extends RuntimeException {
    private final int status;

    HttpProblem(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    int status() {
        return status;
    }
}
