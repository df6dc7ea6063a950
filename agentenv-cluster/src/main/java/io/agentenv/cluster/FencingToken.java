package io.agentenv.cluster;

import static java.util.Objects.requireNonNull;

/**
 * What a node holds while its lease is valid: its id and the epoch its last registration got. Every write a node
 * makes to the sandboxes it owns carries the token, and the store refuses it once the epoch is no longer the
 * node's current one or the node was declared dead, so a node that lost its lease (a pause, a partition) can never
 * change what another node has taken over.
 */
public record FencingToken(NodeId node, long epoch) {
    public FencingToken {
        requireNonNull(node, "node is null");
        if (epoch < 1) {
            throw new IllegalArgumentException("epoch must be positive");
        }
    }
}
