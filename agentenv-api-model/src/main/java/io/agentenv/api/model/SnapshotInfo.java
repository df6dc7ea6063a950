package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/**
 * A snapshot ({@code POST /sandboxes/{id}/snapshots} and {@code GET /snapshots}). {@code snapshotID} can be passed
 * as {@code templateID} to create a sandbox from it; {@code names} lists its aliases (possibly empty).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SnapshotInfo(
        @JsonProperty("snapshotID") String snapshotID,
        List<String> names,
        int cpuCount,
        @JsonProperty("memoryMB") int memoryMB,
        @JsonProperty("diskSizeMB") int diskSizeMB,
        Instant createdAt,
        Instant updatedAt) {

    public SnapshotInfo {
        requireNonNull(snapshotID, "snapshotID is null");
        names = List.copyOf(names);
    }
}
