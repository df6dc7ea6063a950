package io.agentenv.sdk;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Which snapshots {@link Sandbox#listSnapshots} returns.
 *
 * @param sandboxId only snapshots of this sandbox
 * @param name      only the snapshot with this name
 * @param limit     the page size (1..100)
 * @param nextToken where to start
 */
public record SnapshotListOptions(
        Optional<String> sandboxId, Optional<String> name, OptionalInt limit, Optional<String> nextToken) {
    /** Checks the fields. */
    public SnapshotListOptions {
        Objects.requireNonNull(sandboxId, "sandboxId");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(limit, "limit");
        if (limit.isPresent() && (limit.getAsInt() < 1 || limit.getAsInt() > 100)) {
            throw new InvalidArgumentException("limit must be 1..100: " + limit.getAsInt());
        }
        Objects.requireNonNull(nextToken, "nextToken");
    }

    /** Every snapshot. */
    public static SnapshotListOptions all() {
        return new SnapshotListOptions(Optional.empty(), Optional.empty(), OptionalInt.empty(), Optional.empty());
    }

    /** The snapshots of one sandbox. */
    public static SnapshotListOptions ofSandbox(String sandboxId) {
        return new SnapshotListOptions(Optional.of(sandboxId), Optional.empty(), OptionalInt.empty(), Optional.empty());
    }

    /** This filter with a page size. */
    public SnapshotListOptions withLimit(int limit) {
        return new SnapshotListOptions(sandboxId, name, OptionalInt.of(limit), nextToken);
    }

    /** This filter for one name. */
    public SnapshotListOptions withName(String name) {
        return new SnapshotListOptions(sandboxId, Optional.of(name), limit, nextToken);
    }
}
