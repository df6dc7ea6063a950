package io.agentenv.cluster;

import static java.util.Objects.requireNonNull;

import java.net.URI;
import java.time.Instant;

/**
 * A node as the registry knows it.
 *
 * @param id the node's name
 * @param address the base URL gateways forward to (the node server's one port)
 * @param state where it stands
 * @param epoch its current registration's epoch (see {@link FencingToken})
 * @param leaseUntil when its lease runs out unless renewed (the database's clock)
 * @param registeredAt when it last registered
 * @param load what it reported last
 */
public record NodeInfo(
        NodeId id, URI address, NodeState state, long epoch, Instant leaseUntil, Instant registeredAt, NodeLoad load) {
    public NodeInfo {
        requireNonNull(id, "id is null");
        requireNonNull(address, "address is null");
        requireNonNull(state, "state is null");
        requireNonNull(leaseUntil, "leaseUntil is null");
        requireNonNull(registeredAt, "registeredAt is null");
        requireNonNull(load, "load is null");
    }

    public FencingToken token() {
        return new FencingToken(id, epoch);
    }
}
