/**
 * envd's {@code GET /metrics}: CPU, memory and disk of the sandbox in the shape E2B's envd returns
 * ({@code ts, cpu_count, cpu_used_pct, mem_total, mem_used, mem_cache, mem_total_mib, mem_used_mib, disk_used,
 * disk_total}), read from the sandbox's own cgroup (v2, or v1's memory and cpuacct controllers) when there is one and
 * from {@code /proc} otherwise.
 */
package io.agentenv.envd.metrics;
