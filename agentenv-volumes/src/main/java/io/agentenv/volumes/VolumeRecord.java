package io.agentenv.volumes;

import static java.util.Objects.requireNonNull;

import java.time.Instant;

/** A volume as the registry keeps it. */
public record VolumeRecord(String id, String name, int sizeMiB, Instant createdAt) {
    public VolumeRecord {
        if (!VolumeIds.isValid(id)) {
            throw new IllegalArgumentException("bad volume id");
        }
        VolumeNames.check(name);
        if (sizeMiB < 1) {
            throw new IllegalArgumentException("sizeMiB must be >= 1");
        }
        requireNonNull(createdAt, "createdAt is null");
    }
}
