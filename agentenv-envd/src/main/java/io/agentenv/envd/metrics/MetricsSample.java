package io.agentenv.envd.metrics;

import com.google.gson.JsonObject;

/**
 * One reading of the sandbox's resources, in the shape of E2B envd's {@code GET /metrics}: {@code ts} (Unix seconds),
 * {@code cpu_count}, {@code cpu_used_pct} (0-100, two decimals), memory and disk in bytes, plus the deprecated
 * {@code mem_total_mib}/{@code mem_used_mib}.
 */
record MetricsSample(long timestamp, int cpuCount, double cpuUsedPercent, long memTotal, long memUsed, long memCache,
                     long diskUsed, long diskTotal) {
    private static final long MIB = 1024 * 1024;

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

    JsonObject toJson() {
        JsonObject out = new JsonObject();
        out.addProperty("ts", timestamp);
        out.addProperty("cpu_count", cpuCount);
        out.addProperty("cpu_used_pct", cpuUsedPercent);
        out.addProperty("mem_total", memTotal);
        out.addProperty("mem_used", memUsed);
        out.addProperty("mem_cache", memCache);
        out.addProperty("mem_total_mib", memTotal / MIB);
        out.addProperty("mem_used_mib", memUsed / MIB);
        out.addProperty("disk_used", diskUsed);
        out.addProperty("disk_total", diskTotal);
        return out;
    }
}
