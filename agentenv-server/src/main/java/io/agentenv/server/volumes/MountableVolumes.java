package io.agentenv.server.volumes;

import static java.util.Objects.requireNonNull;

import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.orchestrator.ErrorKind;
import io.agentenv.orchestrator.VolumeCatalog;
import io.agentenv.volumes.VolumeException;
import io.agentenv.volumes.Volumes;
import java.nio.file.Path;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The registry as the orchestrator sees it ({@link VolumeCatalog}): volumes to mount into sandboxes. A volume that is
 * gone is the caller's mistake (INVALID_ARGUMENT); a host that cannot keep volumes is UNAVAILABLE.
 */
public final class MountableVolumes implements VolumeCatalog {
    private final Volumes volumes;

    public MountableVolumes(Volumes volumes) {
        this.volumes = requireNonNull(volumes, "volumes is null");
    }

    @Override
    public Optional<Volume> find(String nameOrId) {
        try {
            return volumes.find(nameOrId).map(v -> new Volume(v.id(), v.name()));
        } catch (VolumeException e) {
            throw translated(e);
        }
    }

    @Override
    public Path contentDir(String volumeId) {
        try {
            return volumes.contentDir(volumeId);
        } catch (VolumeException e) {
            throw translated(e);
        }
    }

    @Override
    public <T> T keepingVolumes(Supplier<T> work) {
        return volumes.keepingVolumes(work);
    }

    private static AgentEnvException translated(VolumeException e) {
        ErrorKind kind = switch (e.kind()) {
            case NOT_FOUND, INVALID_ARGUMENT -> ErrorKind.INVALID_ARGUMENT;
            case UNAVAILABLE -> ErrorKind.UNAVAILABLE;
            default -> ErrorKind.INTERNAL;
        };
        return new AgentEnvException(kind, e.getMessage(), e);
    }
}
