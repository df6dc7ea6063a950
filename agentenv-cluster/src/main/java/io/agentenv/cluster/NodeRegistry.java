package io.agentenv.cluster;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Cluster membership: nodes register, renew a lease and report their load; operators drain them; whoever notices a
 * lease that ran out declares the node dead. Lease times are the database's clock, never a node's. Thread-safe;
 * every method is one transaction.
 */
public interface NodeRegistry {
    /**
     * Registers a node, or registers it again after a restart: its epoch becomes one more than before (fencing every
     * token of earlier registrations), its lease runs {@code ttl} from now, and it is ACTIVE unless an operator had
     * drained it (a drain outlives restarts and deaths, until it is undone).
     */
    FencingToken register(NodeId node, URI address, NodeLoad load, Duration ttl);

    /** Extends the lease by {@code ttl} from now; false when the token is fenced: the node must stop serving. */
    boolean renew(FencingToken token, NodeLoad load, Duration ttl);

    List<NodeInfo> nodes();

    Optional<NodeInfo> find(NodeId node);

    /** Sets or clears DRAINING on a live node; false when there is no such node or it is dead. */
    boolean setDraining(NodeId node, boolean draining);

    /**
     * Declares dead every ACTIVE or DRAINING node whose lease ended more than {@code grace} ago (the database's
     * clock), one transaction per node: the node becomes DEAD (fencing its token), its sandboxes that were not paused
     * are recorded as lost with {@code reason} and leave the sandbox table, and its paused ones are released so any
     * node may resume them. Safe to call from every node and gateway at once: each death is reported exactly once.
     */
    List<DeadNode> declareDead(Duration grace, String reason);

    /** What one death declaration did. */
    record DeadNode(NodeId node, long epoch, List<LostSandbox> lost, List<String> released) {
        public DeadNode {
            lost = List.copyOf(lost);
            released = List.copyOf(released);
        }
    }
}
