package io.agentenv.spi;

/**
 * What a pause left on disk, opaque to the orchestrator: it stores {@link #encode()} next to the sandbox record and
 * hands the bytes back to {@link SandboxBackendFactory#decodePausedState} after a restart.
 */
public interface PausedState {
    /** The backend's own serialisation (for example JSON); must round-trip through decodePausedState. */
    byte[] encode();

    PauseMode mode();

    /** The resources the sandbox had when paused; reported for paused sandboxes. */
    Resources resources();
}
