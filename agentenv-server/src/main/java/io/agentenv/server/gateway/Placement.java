package io.agentenv.server.gateway;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.NodeInfo;
import io.agentenv.cluster.NodeLoad;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Orders the nodes that take new sandboxes for one create, best first: a node with a warm sandbox of the template
 * ready, then one that has the template's files on its own disk, then the one with the most room (free sandbox slots
 * and available memory, less the CPU load). Full nodes (no free slot) are left out. Equal nodes are shuffled so that
 * gateways spread a burst instead of all choosing the same node.
 */
final class Placement {
    private final ClusterView cluster;

    Placement(ClusterView cluster) {
        this.cluster = requireNonNull(cluster, "cluster is null");
    }

    /** The candidates for a sandbox of {@code template} (empty: unknown), best first; empty when no node takes one. */
    List<NodeInfo> candidates(Optional<String> template) {
        List<NodeInfo> nodes = new ArrayList<>(cluster.accepting());
        nodes.removeIf(
                n -> n.load().slotsMax() > 0 && n.load().slotsUsed() >= n.load().slotsMax());
        Collections.shuffle(nodes);
        nodes.sort(Comparator.comparingDouble((NodeInfo n) -> score(n.load(), template))
                .reversed());
        return List.copyOf(nodes);
    }

    static double score(NodeLoad load, Optional<String> template) {
        double score = 0;
        if (template.isPresent()) {
            if (load.poolStock().getOrDefault(template.get(), 0) > 0) {
                score += 1_000;
            }
            if (load.localTemplates().contains(template.get())) {
                score += 100;
            }
        }
        if (load.slotsMax() > 0) {
            score += 10.0 * (load.slotsMax() - load.slotsUsed()) / load.slotsMax();
        }
        if (load.memoryTotalMib() > 0) {
            score += 10.0 * load.memoryAvailableMib() / load.memoryTotalMib();
        }
        if (load.cpuCount() > 0) {
            score -= 5.0 * Math.min(load.cpuLoad() / load.cpuCount(), 2.0);
        }
        return score;
    }
}
