package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Map;

/**
 * A node of a cluster, as a gateway's {@code GET /nodes} and {@code GET /nodes/{nodeID}} answer (E2B's admin
 * {@code Node} fields where they exist, AgentENV's besides).
 *
 * @param nodeID the node's name
 * @param status {@code ready}, {@code draining}, {@code unhealthy} (its lease ran out, not yet declared dead) or
 *     {@code dead}
 * @param address where gateways reach it
 * @param epoch its current registration (each start is one more)
 * @param leaseUntil when its lease runs out unless renewed (ISO-8601)
 * @param registeredAt when it last registered (ISO-8601)
 * @param sandboxCount sandboxes it holds (warm ones included)
 * @param sandboxLimit the most it holds at once (0: no limit reported)
 * @param metrics its host's figures
 * @param warmPool warm sandboxes ready per template
 * @param templates templates whose files are on its disk
 */
public record ClusterNode(
        String nodeID,
        String status,
        String address,
        long epoch,
        String leaseUntil,
        String registeredAt,
        int sandboxCount,
        int sandboxLimit,
        Metrics metrics,
        Map<String, Integer> warmPool,
        List<String> templates) {
    public ClusterNode {
        requireNonNull(nodeID, "nodeID is null");
        requireNonNull(status, "status is null");
        requireNonNull(address, "address is null");
        requireNonNull(leaseUntil, "leaseUntil is null");
        requireNonNull(registeredAt, "registeredAt is null");
        requireNonNull(metrics, "metrics is null");
        warmPool = Map.copyOf(requireNonNull(warmPool, "warmPool is null"));
        templates = List.copyOf(requireNonNull(templates, "templates is null"));
    }

    /**
     * A node's host figures.
     *
     * @param cpuCount its CPUs
     * @param cpuLoad its one-minute load average
     * @param memoryTotalBytes its memory
     * @param memoryAvailableBytes memory it could still give
     */
    public record Metrics(int cpuCount, double cpuLoad, long memoryTotalBytes, long memoryAvailableBytes) {}

    /** The body of {@code POST /nodes/{nodeID}}: {@code draining} or {@code ready}. */
    public record StatusChange(String status) {
        public StatusChange {
            if (status == null) {
                throw new IllegalArgumentException("status is required");
            }
        }
    }
}
