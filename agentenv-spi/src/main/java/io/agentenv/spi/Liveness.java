package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

/** What {@link SandboxBackend#liveness()} found: the instance still exists, or it is gone on its own. */
public sealed interface Liveness {
    Liveness ALIVE = new Alive();

    /** The instance exists (its guest agent may still be restarting). */
    record Alive() implements Liveness {}

    /**
     * The instance stopped by itself and can never run again (its init exited, it was OOM-killed as a whole, the host
     * killed it). {@code reason} is for logs, never for API clients.
     */
    record Gone(String reason) implements Liveness {
        public Gone {
            requireNonNull(reason, "reason is null");
            if (reason.isBlank()) {
                throw new IllegalArgumentException("reason is blank");
            }
        }
    }
}
