package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

import java.time.Instant;

/**
 * One reading of a sandbox's resources (envd's {@code GET /metrics}; maps 1:1 onto E2B's {@code SandboxMetric}).
 *
 * @param timestamp  when envd took the reading (second precision)
 * @param cpuCount   CPUs the sandbox may use, at least 1
 * @param cpuUsedPct share of those CPUs used since the previous reading, 0..100
 * @param memUsed    bytes of memory used
 * @param memTotal   bytes of memory available
 * @param memCache   bytes of page cache
 * @param diskUsed   bytes used on the root filesystem
 * @param diskTotal  bytes of the root filesystem
 */
public record EnvdMetrics(
        Instant timestamp,
        int cpuCount,
        double cpuUsedPct,
        long memUsed,
        long memTotal,
        long memCache,
        long diskUsed,
        long diskTotal) {
    public EnvdMetrics {
        requireNonNull(timestamp, "timestamp is null");
        if (cpuCount < 1) {
            throw new IllegalArgumentException("cpuCount must be at least 1, got " + cpuCount);
        }
        if (!(cpuUsedPct >= 0) || Double.isInfinite(cpuUsedPct)) {
            throw new IllegalArgumentException("cpuUsedPct must be a finite number >= 0, got " + cpuUsedPct);
        }
        if (memUsed < 0 || memTotal < 0 || memCache < 0 || diskUsed < 0 || diskTotal < 0) {
            throw new IllegalArgumentException("memory and disk sizes must be >= 0");
        }
    }
}
