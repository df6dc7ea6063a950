package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

/** The result for one fork child, in request order. */
public sealed interface ForkResult {
    record Child(SandboxView sandbox) implements ForkResult {
        public Child {
            requireNonNull(sandbox, "sandbox is null");
        }
    }

    /** This child could not be started; the others are unaffected. The message is safe for clients. */
    record Failed(ErrorKind kind, String message) implements ForkResult {
        public Failed {
            requireNonNull(kind, "kind is null");
            requireNonNull(message, "message is null");
        }
    }
}
