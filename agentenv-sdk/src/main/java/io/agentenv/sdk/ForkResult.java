package io.agentenv.sdk;

import java.util.Optional;

/**
 * One child of {@link Sandbox#fork}: the new sandbox, or why it could not be made (e.g. a
 * {@link RateLimitException} when all sandbox slots are in use).
 */
public final class ForkResult {
    private final Sandbox sandbox;
    private final SandboxException error;

    ForkResult(Sandbox sandbox, SandboxException error) {
        if ((sandbox == null) == (error == null)) {
            throw new IllegalArgumentException("exactly one of sandbox and error");
        }
        this.sandbox = sandbox;
        this.error = error;
    }

    /** The child, if it was made. */
    public Optional<Sandbox> sandbox() {
        return Optional.ofNullable(sandbox);
    }

    /** Why the child was not made, if it was not. */
    public Optional<SandboxException> error() {
        return Optional.ofNullable(error);
    }

    /** The child, or its error thrown. */
    public Sandbox orElseThrow() {
        if (error != null) {
            throw error;
        }
        return sandbox;
    }

    @Override
    public String toString() {
        return sandbox != null
                ? "ForkResult[" + sandbox.sandboxId() + "]"
                : "ForkResult[error=" + error.getMessage() + "]";
    }
}
