package io.agentenv.spi;

import java.util.List;
import java.util.Optional;

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

    /**
     * The guest agent's log journal as it was when the sandbox was paused, oldest first, as {@link EnvdApi#logs} would
     * have served it then: kept by the pause in the artifact dir (never fetched from the guest on the pause path), so
     * it is also there on a state decoded after a restart, and goes with the artifact dir. Empty when this state keeps
     * none (the default; a guest whose journal could not be read). May read the artifact dir: not for the pause path.
     * Bounded by the backend; the text came from inside the sandbox and is untrusted.
     */
    default Optional<List<EnvdLogEntry>> guestLogs() {
        return Optional.empty();
    }
}
