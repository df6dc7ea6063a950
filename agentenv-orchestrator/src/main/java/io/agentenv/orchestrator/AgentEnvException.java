package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.SandboxId;
import java.util.Locale;

/**
 * A typed failure of a lifecycle operation. {@link #getMessage()} is written for API clients: it never contains host
 * paths, commands, tokens or backend output (those stay in the cause, which is only logged).
 */
public final class AgentEnvException extends RuntimeException {
    private final ErrorKind kind;

    public AgentEnvException(ErrorKind kind, String clientMessage, Throwable cause) {
        super(requireNonNull(clientMessage, "clientMessage is null"), cause);
        this.kind = requireNonNull(kind, "kind is null");
    }

    public AgentEnvException(ErrorKind kind, String clientMessage) {
        this(kind, clientMessage, null);
    }

    public ErrorKind kind() {
        return kind;
    }

    public static AgentEnvException notFound(SandboxId id) {
        return new AgentEnvException(ErrorKind.NOT_FOUND, "sandbox " + id.value() + " not found");
    }

    static AgentEnvException invalidState(SandboxId id, SandboxState state, String operation) {
        return new AgentEnvException(
                ErrorKind.CONFLICT,
                "sandbox " + id.value() + " cannot " + operation + " while "
                        + state.name().toLowerCase(Locale.ROOT));
    }

    public static AgentEnvException invalidArgument(String message) {
        return new AgentEnvException(ErrorKind.INVALID_ARGUMENT, message);
    }

    /** The backend hit a capacity limit (429, without Retry-After: a slot frees only when a sandbox is killed or paused). */
    static AgentEnvException exhausted(BackendException.Exhausted e) {
        return new AgentEnvException(
                ErrorKind.RESOURCE_EXHAUSTED,
                "too many sandboxes: " + e.limit() + "; kill or pause a sandbox, then retry",
                e);
    }

    public static AgentEnvException unavailable() {
        return new AgentEnvException(ErrorKind.UNAVAILABLE, "server is shutting down");
    }
}
