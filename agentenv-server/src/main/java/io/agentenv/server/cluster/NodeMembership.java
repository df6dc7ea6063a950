package io.agentenv.server.cluster;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.FencingToken;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.NodeLoad;
import io.agentenv.cluster.NodeRegistry;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's membership: it registers once (a new epoch, which fences every earlier run of the same node), then
 * renews its lease every third of its length with its current load. A renewal the registry refuses means the node was
 * declared dead or registered again elsewhere: {@code fenced} is run and renewing stops, since nothing this node writes
 * would be accepted any more. While the database cannot be reached the node keeps serving what it runs and keeps
 * trying; if it stays away longer than the lease, the node may be declared dead, and it learns so on its next
 * renewal.
 */
public final class NodeMembership implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(NodeMembership.class);

    private final NodeRegistry registry;
    private final FencingToken token;
    private final Duration ttl;
    private final Supplier<NodeLoad> load;
    private final Runnable fenced;
    private final Clock clock;
    private final Thread renewer;

    private NodeMembership(
            NodeRegistry registry,
            FencingToken token,
            Duration ttl,
            Supplier<NodeLoad> load,
            Runnable fenced,
            Clock clock) {
        this.registry = registry;
        this.token = token;
        this.ttl = ttl;
        this.load = load;
        this.fenced = fenced;
        this.clock = clock;
        this.renewer = Thread.ofVirtual().name("aenv-node-lease").unstarted(this::renewLoop);
    }

    /** Registers {@code node} and starts renewing; throws what the registry throws when it cannot register. */
    public static NodeMembership join(
            NodeRegistry registry,
            NodeId node,
            URI address,
            Duration ttl,
            Supplier<NodeLoad> load,
            Runnable fenced,
            Clock clock) {
        requireNonNull(registry, "registry is null");
        requireNonNull(node, "node is null");
        requireNonNull(address, "address is null");
        requireNonNull(ttl, "ttl is null");
        requireNonNull(load, "load is null");
        requireNonNull(fenced, "fenced is null");
        requireNonNull(clock, "clock is null");
        FencingToken token = registry.register(node, address, load.get(), ttl);
        log.atInfo()
                .addKeyValue("node", node.value())
                .addKeyValue("epoch", token.epoch())
                .addKeyValue("address", address)
                .log("cluster: node registered");
        NodeMembership membership = new NodeMembership(registry, token, ttl, load, fenced, clock);
        membership.renewer.start();
        return membership;
    }

    /** The token of this run's registration: the stores stamp and check it on every write. */
    public FencingToken token() {
        return token;
    }

    @Override
    public void close() {
        renewer.interrupt();
        try {
            renewer.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void renewLoop() {
        Duration every = ttl.dividedBy(3);
        Instant lastRenewed = clock.instant();
        boolean failing = false;
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(every);
            } catch (InterruptedException e) {
                return;
            }
            try {
                if (!registry.renew(token, load.get(), ttl)) {
                    log.atError()
                            .addKeyValue("node", token.node().value())
                            .addKeyValue("epoch", token.epoch())
                            .log("cluster: the lease was refused (declared dead, or registered again elsewhere);"
                                    + " this node stops");
                    fenced.run();
                    return;
                }
                if (failing) {
                    log.atInfo().log("cluster: lease renewed again");
                }
                failing = false;
                lastRenewed = clock.instant();
            } catch (RuntimeException e) {
                if (!failing) {
                    log.atWarn().setCause(e).log("cluster: the lease cannot be renewed; retrying");
                }
                failing = true;
                if (clock.instant().isAfter(lastRenewed.plus(ttl))) {
                    log.atWarn()
                            .addKeyValue("since", lastRenewed)
                            .log("cluster: the lease ran out while the database is unreachable");
                }
            }
        }
    }
}
