package io.agentenv.backend.container;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;

/** What {@code runc state} reports about one container. */
record ContainerState(ContainerId id, Status status, long pid, Path bundle) {

    /** runc's container statuses. */
    enum Status { CREATING, CREATED, RUNNING, PAUSED, STOPPED }

    ContainerState {
        requireNonNull(id, "id is null");
        requireNonNull(status, "status is null");
        requireNonNull(bundle, "bundle is null");
    }
}
