package io.agentenv.envd.protocol.rest;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * The body of {@code GET /metrics}, in the shape of E2B envd's: {@code ts} (Unix seconds), {@code cpu_count},
 * {@code cpu_used_pct} (0-100), memory and disk in bytes, plus the deprecated {@code mem_total_mib}/{@code mem_used_mib}.
 * {@code mem_cache} is 0 when an envd does not send it.
 */
public record Metrics(
        @JsonProperty(value = "ts", required = true) long ts,
        @JsonProperty(value = "cpu_count", required = true) int cpuCount,

        @JsonProperty(value = "cpu_used_pct", required = true)
        double cpuUsedPct,

        @JsonProperty(value = "mem_total", required = true) long memTotal,
        @JsonProperty(value = "mem_used", required = true) long memUsed,
        @JsonProperty("mem_cache") long memCache,
        @JsonProperty("mem_total_mib") long memTotalMib,
        @JsonProperty("mem_used_mib") long memUsedMib,
        @JsonProperty(value = "disk_used", required = true) long diskUsed,
        @JsonProperty(value = "disk_total", required = true) long diskTotal) {
    private static final long MIB = 1024 * 1024;

    /** A reading with the deprecated MiB fields derived from the byte counts. */
    public static Metrics of(
            long ts,
            int cpuCount,
            double cpuUsedPct,
            long memTotal,
            long memUsed,
            long memCache,
            long diskUsed,
            long diskTotal) {
        return new Metrics(
                ts,
                cpuCount,
                cpuUsedPct,
                memTotal,
                memUsed,
                memCache,
                memTotal / MIB,
                memUsed / MIB,
                diskUsed,
                diskTotal);
    }
}
