package io.agentenv.server.gateway;

import io.agentenv.cluster.FencingToken;
import io.agentenv.cluster.LostSandbox;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.NodeInfo;
import io.agentenv.cluster.NodeLoad;
import io.agentenv.cluster.NodeRegistry;
import io.agentenv.cluster.NodeState;
import io.agentenv.cluster.SandboxOwners;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** An in-memory registry and owner table for gateway tests: the test sets what the database would say. */
final class FakeCluster implements NodeRegistry, SandboxOwners {
    private final Map<NodeId, NodeInfo> nodes = new ConcurrentHashMap<>();
    private final Map<String, Ownership> owners = new ConcurrentHashMap<>();
    private final Map<String, LostSandbox> lost = new ConcurrentHashMap<>();
    final AtomicInteger ownerReads = new AtomicInteger();
    volatile boolean databaseDown;

    void node(String id, URI address, NodeState state, Instant leaseUntil, NodeLoad load) {
        NodeId nodeId = new NodeId(id);
        nodes.put(nodeId, new NodeInfo(nodeId, address, state, 1, leaseUntil, Instant.EPOCH, load));
    }

    void owns(String sandboxId, Optional<String> node, boolean paused) {
        owners.put(sandboxId, new Ownership(node.map(NodeId::new), paused));
    }

    void lose(String sandboxId, String node) {
        owners.remove(sandboxId);
        lost.put(
                sandboxId,
                new LostSandbox(
                        sandboxId,
                        new NodeId(node),
                        "base",
                        "RUNNING",
                        Map.of(),
                        Optional.empty(),
                        "lease expired",
                        Instant.parse("2026-01-01T00:00:00Z")));
    }

    @Override
    public FencingToken register(NodeId node, URI address, NodeLoad load, Duration ttl) {
        throw new UnsupportedOperationException("gateways do not register");
    }

    @Override
    public boolean renew(FencingToken token, NodeLoad load, Duration ttl) {
        throw new UnsupportedOperationException("gateways do not renew");
    }

    @Override
    public List<NodeInfo> nodes() {
        return new ArrayList<>(nodes.values());
    }

    @Override
    public Optional<NodeInfo> find(NodeId node) {
        return Optional.ofNullable(nodes.get(node));
    }

    @Override
    public boolean setDraining(NodeId node, boolean draining) {
        NodeInfo info = nodes.get(node);
        if (info == null || info.state() == NodeState.DEAD) {
            return false;
        }
        nodes.put(
                node,
                new NodeInfo(
                        node,
                        info.address(),
                        draining ? NodeState.DRAINING : NodeState.ACTIVE,
                        info.epoch(),
                        info.leaseUntil(),
                        info.registeredAt(),
                        info.load()));
        return true;
    }

    @Override
    public List<DeadNode> declareDead(Duration grace, String reason) {
        return List.of();
    }

    @Override
    public Optional<Ownership> owner(String sandboxId) {
        ownerReads.incrementAndGet();
        if (databaseDown) {
            throw new IllegalStateException("connection refused");
        }
        return Optional.ofNullable(owners.get(sandboxId));
    }

    @Override
    public Optional<LostSandbox> lost(String sandboxId) {
        return Optional.ofNullable(lost.get(sandboxId));
    }

    /** The token seed the fake cluster's nodes derive tokens from. */
    static final String SEED = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    /** Every sandbox that is owned and not paused. */
    @Override
    public List<String> running() {
        return owners.entrySet().stream()
                .filter(e -> !e.getValue().paused())
                .map(Map.Entry::getKey)
                .sorted()
                .toList();
    }

    @Override
    public Optional<String> tokenSeed() {
        return Optional.of(SEED);
    }
}
