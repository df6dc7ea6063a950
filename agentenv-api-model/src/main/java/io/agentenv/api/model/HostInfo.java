package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * {@code GET /host}: this server's own overview of its host (not a route of E2B's), which the web console's host view
 * shows. Sizes in bytes.
 *
 * @param version       the server's version
 * @param backend       the sandbox backend's name ({@code AENV_BACKEND})
 * @param startedAt     when the server started (RFC 3339)
 * @param uptimeSeconds seconds since then
 * @param sandboxes     sandboxes by E2B state
 * @param slots         the backend's sandbox slots; null when the backend does not keep count
 * @param warmPool      the warm pool's stock per template kept warm
 * @param machine       the host machine as the server's JVM sees it
 */
public record HostInfo(
        String version,
        String backend,
        String startedAt,
        long uptimeSeconds,
        Sandboxes sandboxes,
        Slots slots,
        List<PoolStock> warmPool,
        Machine machine) {
    public HostInfo {
        requireNonNull(version, "version is null");
        requireNonNull(backend, "backend is null");
        requireNonNull(startedAt, "startedAt is null");
        requireNonNull(sandboxes, "sandboxes is null");
        warmPool = List.copyOf(warmPool);
        requireNonNull(machine, "machine is null");
    }

    /** Sandboxes by state: {@code running} counts the transitions that end running, as the list routes do. */
    public record Sandboxes(long running, long paused) {}

    /** Slots in use (sandboxes and warm pool members) and how many there are ({@code total} null: no fixed limit). */
    public record Slots(int used, Integer total) {}

    /** One template's warm pool: members ready now and the size it refills to. */
    public record PoolStock(String templateID, int ready, int target) {
        public PoolStock {
            requireNonNull(templateID, "templateID is null");
        }
    }

    /**
     * The machine: CPUs, the system's CPU load over its last sampling (0..1; null when unknown), the one-minute load
     * average (null when unknown), and memory ({@code memFree}: what is available without swapping, Linux's
     * MemAvailable when it can be read).
     */
    public record Machine(int cpuCount, Double cpuLoad, Double loadAverage, long memTotal, long memFree) {}
}
