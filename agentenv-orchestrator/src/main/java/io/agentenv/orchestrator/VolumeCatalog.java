package io.agentenv.orchestrator;

import java.nio.file.Path;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The orchestrator's view of the server's volumes: finding one by name or id for a create, the host directory a launch
 * binds, and a guard that keeps a volume from being deleted between a create resolving it and the create's record being
 * stored (after that the record itself keeps it: a mounted volume cannot be deleted).
 */
public interface VolumeCatalog {
    /** A volume: its id and its name. */
    record Volume(String id, String name) {}

    /** The volume whose id or name is {@code nameOrId}; empty when there is none. */
    Optional<Volume> find(String nameOrId);

    /**
     * The host directory holding the content of volume {@code volumeId}, to bind into a sandbox; an
     * {@link AgentEnvException} when the volume is gone (INVALID_ARGUMENT) or its storage is not available here.
     */
    Path contentDir(String volumeId);

    /** Runs {@code work} while no volume can be deleted; deletes wait for it, creates do not wait for each other. */
    <T> T keepingVolumes(Supplier<T> work);

    /** A server without volumes: none is found. */
    VolumeCatalog NONE = new VolumeCatalog() {
        @Override
        public Optional<Volume> find(String nameOrId) {
            return Optional.empty();
        }

        @Override
        public Path contentDir(String volumeId) {
            throw AgentEnvException.invalidArgument("volume " + volumeId + " not found");
        }

        @Override
        public <T> T keepingVolumes(Supplier<T> work) {
            return work.get();
        }
    };
}
