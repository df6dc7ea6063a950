package io.agentenv.volumes;

import java.util.Set;

/**
 * Which sandboxes mount a volume: a volume that is mounted cannot be deleted. The orchestrator answers this once
 * sandboxes mount volumes; until then nothing mounts them.
 */
@FunctionalInterface
public interface VolumeUsers {
    /** The ids of the sandboxes (running or paused) that mount {@code volumeId}. */
    Set<String> sandboxesMounting(String volumeId);

    static VolumeUsers none() {
        return volumeId -> Set.of();
    }
}
