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
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's membership: it registers once (a new epoch, which fences every earlier run of the same node) before its
 * stores open, since they stamp the registration's token on every write; once the node serves,
 * {@link #startRenewing} renews its lease every third of its length with its current load. A renewal the registry refuses means the node was
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
    private final Clock clock;
    private volatile Thread renewer;
    private volatile Instant lastRenewed;
    private final LongAdder failedRenewals = new LongAdder();

    private NodeMembership(NodeRegistry registry, FencingToken token, Duration ttl, Clock clock) {
        this.registry = registry;
        this.token = token;
        this.ttl = ttl;
        this.clock = clock;
        this.lastRenewed = clock.instant();
    }

    /**
     * Registers {@code node} with what it reports before it serves ({@code load}); throws what the registry throws
     * when it cannot register.
     */
    public static NodeMembership join(
            NodeRegistry registry, NodeId node, URI address, Duration ttl, NodeLoad load, Clock clock) {
        requireNonNull(registry, "registry is null");
        requireNonNull(node, "node is null");
        requireNonNull(address, "address is null");
        requireNonNull(ttl, "ttl is null");
        requireNonNull(load, "load is null");
        requireNonNull(clock, "clock is null");
        FencingToken token = registry.register(node, address, load, ttl);
        log.atInfo()
                .addKeyValue("node", node.value())
                .addKeyValue("epoch", token.epoch())
                .addKeyValue("address", address)
                .log("cluster: node registered");
        return new NodeMembership(registry, token, ttl, clock);
    }

    /** Starts renewing the lease with {@code load}; {@code fenced} runs once if a renewal is refused. */
    public synchronized void startRenewing(Supplier<NodeLoad> load, Runnable fenced) {
        requireNonNull(load, "load is null");
        requireNonNull(fenced, "fenced is null");
        if (renewer != null) {
            throw new IllegalStateException("already renewing");
        }
        renewer = Thread.ofVirtual().name("aenv-node-lease").start(() -> renewLoop(load, fenced));
    }

    /** The token of this run's registration: the stores stamp and check it on every write. */
    public FencingToken token() {
        return token;
    }

    /** When the lease was last registered or renewed (this node's clock). */
    public Instant lastRenewed() {
        return lastRenewed;
    }

    /** How many renewals failed because the database could not be reached (a refused one stops the node). */
    public long failedRenewals() {
        return failedRenewals.sum();
    }

    @Override
    public void close() {
        Thread running = renewer;
        if (running == null) {
            return;
        }
        running.interrupt();
        try {
            running.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void renewLoop(Supplier<NodeLoad> load, Runnable fenced) {
        Duration every = ttl.dividedBy(3);
        boolean failing = false;
        boolean expiryReported = false;
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
                expiryReported = false;
                lastRenewed = clock.instant();
            } catch (RuntimeException e) {
                failedRenewals.increment();
                if (!failing) {
                    log.atWarn().setCause(e).log("cluster: the lease cannot be renewed; retrying");
                }
                failing = true;
                if (!expiryReported && clock.instant().isAfter(lastRenewed.plus(ttl))) {
                    expiryReported = true; // once per outage, not every retry
                    log.atWarn()
                            .addKeyValue("since", lastRenewed)
                            .log("cluster: the lease ran out while the database is unreachable");
                }
            }
        }
    }
}
