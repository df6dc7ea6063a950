package io.agentenv.backend.container.runtime;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.ContainerId;
import java.nio.file.Path;

/** What {@code runc state} reports about one container. */
public record ContainerState(ContainerId id, Status status, long pid, Path bundle) {

    /** runc's container statuses. */
    public enum Status {
        CREATING,
        CREATED,
        RUNNING,
        PAUSED,
        STOPPED
    }

    public ContainerState {
        requireNonNull(id, "id is null");
        requireNonNull(status, "status is null");
        requireNonNull(bundle, "bundle is null");
    }
}
