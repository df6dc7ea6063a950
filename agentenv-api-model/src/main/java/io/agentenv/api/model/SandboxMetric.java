package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

/**
 * One item of {@code GET /sandboxes/{id}/metrics}. {@code timestamp} (RFC 3339) is deprecated in E2B's schema in
 * favour of {@code timestampUnix} (seconds), but the SDKs still read it, so both are always sent. Sizes in bytes.
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
        long diskTotal) {
    public SandboxMetric {
        requireNonNull(timestamp, "timestamp is null");
    }
}
