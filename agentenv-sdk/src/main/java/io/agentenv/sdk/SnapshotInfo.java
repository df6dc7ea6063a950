package io.agentenv.sdk;

import java.util.List;
import java.util.Objects;

/**
 * A snapshot of a sandbox (memory and filesystem); create sandboxes from it with
 * {@code Sandbox.create(CreateOptions.builder().template(snapshotId))}.
 *
 * @param snapshotId its id (usable as a template)
 * @param names      its names (aliases), possibly empty
 */
public record SnapshotInfo(String snapshotId, List<String> names) {
    /** Checks the fields. */
    public SnapshotInfo {
        Objects.requireNonNull(snapshotId, "snapshotId");
        names = List.copyOf(names);
    }
}
