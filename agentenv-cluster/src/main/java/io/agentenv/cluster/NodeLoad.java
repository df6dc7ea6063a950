package io.agentenv.cluster;

import static java.util.Objects.requireNonNull;

import java.util.Map;
import java.util.Set;

/**
 * What a node reports with each lease renewal, for placement.
 *
 * @param cpuCount the host's CPUs
 * @param memoryTotalMib the host's memory
 * @param memoryAvailableMib memory the host could still give (MemAvailable)
 * @param cpuLoad the one-minute load average
 * @param slotsUsed sandboxes the backend holds now
 * @param slotsMax the most it holds at once
 * @param poolStock warm members ready per template id
 * @param localTemplates templates whose files this node has on its own disk (no fetch needed to start one)
 * @param sharedVolumes whether this node keeps volumes in the cluster's shared volume directory (every such node sees
 *     every volume), not on its own disk
 */
public record NodeLoad(
        int cpuCount,
        long memoryTotalMib,
        long memoryAvailableMib,
        double cpuLoad,
        int slotsUsed,
        int slotsMax,
        Map<String, Integer> poolStock,
        Set<String> localTemplates,
        boolean sharedVolumes) {
    public NodeLoad {
        poolStock = Map.copyOf(requireNonNull(poolStock, "poolStock is null"));
        localTemplates = Set.copyOf(requireNonNull(localTemplates, "localTemplates is null"));
        if (cpuCount < 0 || memoryTotalMib < 0 || memoryAvailableMib < 0 || slotsUsed < 0 || slotsMax < 0) {
            throw new IllegalArgumentException("load figures must not be negative");
        }
    }

    /** A node whose volumes are on its own disk. */
    public NodeLoad(
            int cpuCount,
            long memoryTotalMib,
            long memoryAvailableMib,
            double cpuLoad,
            int slotsUsed,
            int slotsMax,
            Map<String, Integer> poolStock,
            Set<String> localTemplates) {
        this(
                cpuCount,
                memoryTotalMib,
                memoryAvailableMib,
                cpuLoad,
                slotsUsed,
                slotsMax,
                poolStock,
                localTemplates,
                false);
    }

    /** A node that reported nothing yet. */
    public static final NodeLoad UNKNOWN = new NodeLoad(0, 0, 0, 0, 0, 0, Map.of(), Set.of());
}
