package io.agentenv.sdk;

import java.time.Instant;

/**
 * One sample of a sandbox's resource use ({@link Sandbox#getMetrics()}). Sizes in bytes.
 *
 * @param timestamp  when it was sampled
 * @param cpuCount   CPUs
 * @param cpuUsedPct CPU use in percent
 * @param memUsed    memory used
 * @param memTotal   memory available
 * @param memCache   memory used as page cache
 * @param diskUsed   disk used
 * @param diskTotal  disk size
 */
public record SandboxMetrics(
        Instant timestamp,
        int cpuCount,
        double cpuUsedPct,
        long memUsed,
        long memTotal,
        long memCache,
        long diskUsed,
        long diskTotal) {}
