package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * One item of {@code GET /sandboxes/{id}/metrics}. {@code timestamp} (RFC 3339) is deprecated in E2B's schema in
 * favour of {@code timestampUnix} (seconds), but the SDKs still read it, so both are always sent. Sizes in bytes.
 * {@code volumes} is this server's own field, on the newest item only: the usage of each volume the sandbox mounts at
 * the time of the request (absent when it mounts none).
 */
public record SandboxMetric(
        String timestamp,
        long timestampUnix,
        int cpuCount,
        double cpuUsedPct,
        long memUsed,
        long memTotal,
        long memCache,
        long diskUsed,
        long diskTotal,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<SandboxVolumeUsage> volumes) {
    public SandboxMetric {
        requireNonNull(timestamp, "timestamp is null");
        volumes = volumes == null ? List.of() : List.copyOf(volumes);
    }

    /** An item without volume usage. */
    public SandboxMetric(
            String timestamp,
            long timestampUnix,
            int cpuCount,
            double cpuUsedPct,
            long memUsed,
            long memTotal,
            long memCache,
            long diskUsed,
            long diskTotal) {
        this(timestamp, timestampUnix, cpuCount, cpuUsedPct, memUsed, memTotal, memCache, diskUsed, diskTotal, null);
    }

    /** This item with {@code usage} as its volumes. */
    public SandboxMetric withVolumes(List<SandboxVolumeUsage> usage) {
        return new SandboxMetric(
                timestamp,
                timestampUnix,
                cpuCount,
                cpuUsedPct,
                memUsed,
                memTotal,
                memCache,
                diskUsed,
                diskTotal,
                usage);
    }
}
