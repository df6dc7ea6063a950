package io.agentenv.spi;

/**
 * A ready instance of a built-in template set aside for one create, under the sandbox id the backend gave it when it
 * made the instance ({@link SandboxBackendFactory#reserve}). The create launches a sandbox of exactly {@link #id()}:
 * {@link SandboxBackendFactory#prepare} with a {@link LaunchSpec} of that id and that template takes the instance, and
 * from then on the prepared {@link SandboxBackend} owns it (its {@code close} destroys it). {@link #close()} gives an
 * instance that {@code prepare} did not take back to the backend, for another create; an instance is never taken twice.
 */
public interface Reservation extends AutoCloseable {
    /** The id the create must use. */
    SandboxId id();

    /** Gives the instance back unless {@code prepare} took it. Idempotent; never throws. */
    @Override
    void close();
}
