package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.SandboxId;
import java.util.Optional;

/** Lists snapshots newest first (by createdAt, id), optionally of one source sandbox and/or with one name. */
public record SnapshotQuery(Optional<SandboxId> sandbox, Optional<String> name, int limit, Optional<Cursor> after) {
    public SnapshotQuery {
        requireNonNull(sandbox, "sandbox is null");
        requireNonNull(name, "name is null");
        if (limit < 0 || limit > 1000) {
            throw new IllegalArgumentException("limit out of range: " + limit);
        }
        requireNonNull(after, "after is null");
    }
}
