package io.agentenv.server.proxy;

import static java.util.Objects.requireNonNull;

import java.util.Optional;

/**
 * Why the proxy answers itself instead of forwarding: a status and a client-safe message, and the sandbox id for the
 * E2B "not found" body. {@link SandboxProxy} turns it into {@code {"code","message"[,"sandboxId"]}}.
 */
public final class ProxyProblem extends Exception {
    static final String NOT_FOUND_MESSAGE = "The sandbox was not found";

    private final int status;
    private final Optional<String> sandboxId;

    ProxyProblem(int status, String message, Optional<String> sandboxId) {
        super(requireNonNull(message, "message is null"), null, false, false);
        this.status = status;
        this.sandboxId = requireNonNull(sandboxId, "sandboxId is null");
    }

    /** Unknown, killed or not running: 502 so the SDK's isRunning() says false and a cut stream reads as "killed". */
    static ProxyProblem sandboxNotFound(String sandboxId) {
        return new ProxyProblem(502, NOT_FOUND_MESSAGE, Optional.of(sandboxId));
    }

    public static ProxyProblem of(int status, String message) {
        return new ProxyProblem(status, message, Optional.empty());
    }

    int status() {
        return status;
    }

    Optional<String> sandboxId() {
        return sandboxId;
    }
}
