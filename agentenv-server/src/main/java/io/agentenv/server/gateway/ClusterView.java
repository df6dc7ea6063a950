package io.agentenv.server.gateway;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.NodeInfo;
import io.agentenv.cluster.NodeRegistry;
import io.agentenv.cluster.NodeState;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's picture of the cluster's nodes: read from the registry on start and then every {@code refresh} by a
 * background thread, so that routing a request reads memory only. When the registry cannot be read the last picture
 * stays (requests still reach nodes; sandbox owners are looked up separately). A node serves while it is not dead and
 * its lease has not run out; it takes new sandboxes while it is also ACTIVE.
 */
final class ClusterView implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ClusterView.class);

    private final NodeRegistry registry;
    private final Clock clock;
    private final Duration refresh;
    private volatile List<NodeInfo> nodes = List.of();
    private volatile boolean readable;
    private final Thread refresher;

    ClusterView(NodeRegistry registry, Clock clock, Duration refresh) {
        this.registry = requireNonNull(registry, "registry is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.refresh = requireNonNull(refresh, "refresh is null");
        reload();
        this.refresher = Thread.ofVirtual().name("aenv-gateway-nodes").start(this::refreshLoop);
    }

    /** Every node the registry knows, dead ones included, by id. */
    List<NodeInfo> nodes() {
        return nodes;
    }

    Optional<NodeInfo> node(NodeId id) {
        return nodes.stream().filter(n -> n.id().equals(id)).findFirst();
    }

    /** Whether requests may go to {@code node}: not dead, lease not run out. */
    boolean serving(NodeInfo node) {
        return node.state() != NodeState.DEAD && node.leaseUntil().isAfter(clock.instant());
    }

    /**
     * A node's status as {@code GET /nodes} and the metrics give it: {@code dead}, {@code unhealthy} (its lease ran
     * out, not yet declared dead), {@code draining} or {@code ready}.
     */
    String status(NodeInfo node) {
        if (node.state() == NodeState.DEAD) {
            return "dead";
        }
        if (!serving(node)) {
            return "unhealthy";
        }
        return node.state() == NodeState.DRAINING ? "draining" : "ready";
    }

    /** The nodes that take new sandboxes: serving and ACTIVE. */
    List<NodeInfo> accepting() {
        return nodes.stream()
                .filter(n -> n.state() == NodeState.ACTIVE && serving(n))
                .toList();
    }

    /**
     * Whether every node that takes new sandboxes keeps its volumes in the cluster's shared volume directory (each sees
     * every volume), so a create that mounts volumes may go to any of them.
     */
    boolean volumesShared() {
        List<NodeInfo> candidates = accepting();
        return !candidates.isEmpty()
                && candidates.stream().allMatch(n -> n.load().sharedVolumes());
    }

    /** Any node that takes new sandboxes, else any serving one; empty when none serves. */
    Optional<NodeInfo> anyNode() {
        List<NodeInfo> candidates = accepting();
        if (candidates.isEmpty()) {
            candidates = nodes.stream().filter(this::serving).toList();
        }
        return candidates.isEmpty()
                ? Optional.empty()
                : Optional.of(candidates.get(ThreadLocalRandom.current().nextInt(candidates.size())));
    }

    /**
     * The node for {@code key} by rendezvous hashing over the accepting nodes: the same node for the same key while
     * it accepts, and only the keys of a node that left move when the set changes.
     */
    Optional<NodeInfo> byKey(String key) {
        return accepting().stream().max(Comparator.comparingLong(n -> weight(key, n.id())));
    }

    /** Reads the registry now (also after a node was told to drain, so the change shows at once). */
    void reload() {
        try {
            nodes = registry.nodes();
            if (!readable) {
                log.atInfo().addKeyValue("nodes", nodes.size()).log("gateway: cluster registry read");
            }
            readable = true;
        } catch (RuntimeException e) {
            if (readable) {
                log.atWarn()
                        .setCause(e)
                        .log("gateway: the cluster registry cannot be read; routing with the last known nodes");
            }
            readable = false;
        }
    }

    @Override
    public void close() {
        refresher.interrupt();
    }

    private void refreshLoop() {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(refresh);
            } catch (InterruptedException e) {
                return;
            }
            reload();
        }
    }

    private static long weight(String key, NodeId node) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest((key + "\n" + node.value()).getBytes(StandardCharsets.UTF_8));
            long weight = 0;
            for (int i = 0; i < Long.BYTES; i++) {
                weight = (weight << 8) | (digest[i] & 0xff);
            }
            return weight;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }
}
