package io.agentenv.envd.metrics;

import io.agentenv.envd.protocol.rest.Metrics;

/**
 * One reading of the sandbox's resources, in the shape of E2B envd's {@code GET /metrics}: {@code ts} (Unix seconds),
 * {@code cpu_count}, {@code cpu_used_pct} (0-100, two decimals), memory and disk in bytes, plus the deprecated
 * {@code mem_total_mib}/{@code mem_used_mib}.
 */
record MetricsSample(
        long timestamp,
        int cpuCount,
        double cpuUsedPercent,
        long memTotal,
        long memUsed,
        long memCache,
        long diskUsed,
        long diskTotal) {
    MetricsSample {
        if (cpuCount < 1) {
            throw new IllegalArgumentException("cpuCount must be >= 1, got " + cpuCount);
        }
        if (cpuUsedPercent < 0 || Double.isNaN(cpuUsedPercent)) {
            throw new IllegalArgumentException("cpuUsedPercent must be >= 0, got " + cpuUsedPercent);
        }
        if (memTotal < 0 || memUsed < 0 || memCache < 0 || diskUsed < 0 || diskTotal < 0) {
            throw new IllegalArgumentException("sizes must be >= 0");
        }
    }

    /** The reading as envd's wire record. */
    Metrics toWire() {
        return Metrics.of(timestamp, cpuCount, cpuUsedPercent, memTotal, memUsed, memCache, diskUsed, diskTotal);
    }
}
