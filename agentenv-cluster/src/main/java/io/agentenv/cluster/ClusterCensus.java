package io.agentenv.cluster;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Map;

/**
 * The cluster as its database sees it at one moment, for metrics: the nodes with their last reported load, and the
 * sandboxes counted by owner and state. Read in one transaction of a bounded number of queries, however many nodes
 * and sandboxes there are. Thread-safe.
 */
public interface ClusterCensus {
    /** Reads the census now; throws what the database throws. */
    Census census();

    /**
     * One census.
     *
     * @param nodes every node the registry knows, dead ones included
     * @param sandboxes per owning node, its sandboxes by state name ({@code RUNNING}, {@code PAUSED}, ...)
     * @param unowned paused sandboxes a dead node released, which no node owns until one resumes them
     * @param lost sandboxes lost with a node declared dead, ever (the {@code lost_sandbox} records)
     */
    record Census(List<NodeInfo> nodes, Map<NodeId, Map<String, Long>> sandboxes, long unowned, long lost) {
        public Census {
            nodes = List.copyOf(requireNonNull(nodes, "nodes is null"));
            sandboxes = Map.copyOf(requireNonNull(sandboxes, "sandboxes is null"));
        }
    }
}
