package io.agentenv.server.cluster;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.NodeLoad;
import io.agentenv.orchestrator.LifecycleHooks;
import io.agentenv.orchestrator.SharedArtifacts;
import io.agentenv.server.config.ClusterConfig;
import io.agentenv.server.config.ClusterDatabase;
import io.agentenv.server.metrics.MetricsSource;
import io.agentenv.server.metrics.PrometheusText;
import io.agentenv.spi.SharedFiles;
import io.agentenv.store.postgres.PostgresDatabase;
import io.agentenv.store.postgres.PostgresNodeRegistry;
import io.agentenv.store.postgres.PostgresSandboxStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This server as a node of a cluster: the cluster's database, the node's registration and the store opened for it,
 * its lease renewals from the registration on (a start that takes longer than the lease and the grace, such as a
 * backend building its templates' boot images, must not get the node declared dead), and, once the node serves, its
 * load in those renewals and its share of the dead-node sweeps. {@link #close} stops renewing (the lease then runs out
 * on its own) and closes the store and the database.
 */
public final class ClusterNode implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ClusterNode.class);

    /**
     * What a fenced server does: halt at once, without the shutdown that would pause its sandboxes (their records are
     * no longer its own); a restart re-registers and reaps what is left on the host, as after a crash.
     */
    public static final Runnable HALT = () -> Runtime.getRuntime().halt(3);

    private final ClusterConfig config;
    /** Where trees being stored in the shared storage are spooled: this node's own, emptied when the node joins. */
    private final Path spoolDir;

    private final PostgresDatabase database;
    private final PostgresNodeRegistry registry;
    private final NodeMembership membership;
    private final PostgresSandboxStore store;
    /** What the renewals report: {@link NodeLoad#UNKNOWN} until the node serves. */
    private volatile Supplier<NodeLoad> load = () -> NodeLoad.UNKNOWN;
    /** Guards onFenced and fencedEarly (not this: a renewal that waits for it must not hold up stopRenewing). */
    private final Object fencing = new Object();
    /** What a refused renewal runs: set when the node serves; before, the refusal is remembered. */
    private Runnable onFenced;

    private boolean fencedEarly;
    private DeadNodeSweeper sweeper;
    private ObjectStoreArtifacts sharedArtifacts;

    private ClusterNode(
            ClusterConfig config,
            Path spoolDir,
            PostgresDatabase database,
            PostgresNodeRegistry registry,
            NodeMembership membership,
            PostgresSandboxStore store) {
        this.config = config;
        this.spoolDir = spoolDir;
        this.database = database;
        this.registry = registry;
        this.membership = membership;
        this.store = store;
    }

    /**
     * Opens the cluster's database, registers this node and opens its store; nothing is left open on failure.
     * {@code dataDir} is this node's own data directory (it spools what it stores in the shared storage there).
     */
    public static ClusterNode join(ClusterConfig config, Path dataDir, Clock clock) {
        requireNonNull(config, "config is null");
        requireNonNull(dataDir, "dataDir is null");
        requireNonNull(clock, "clock is null");
        Path spoolDir = emptySpool(dataDir.resolve("object-spool"));
        PostgresDatabase database = open(config.database());
        try {
            PostgresNodeRegistry registry = new PostgresNodeRegistry(database);
            NodeMembership membership = NodeMembership.join(
                    registry, config.nodeId(), config.address(), config.leaseTtl(), NodeLoad.UNKNOWN, clock);
            PostgresSandboxStore store = PostgresSandboxStore.open(database, membership.token());
            ClusterNode node = new ClusterNode(config, spoolDir, database, registry, membership, store);
            membership.startRenewing(() -> node.load.get(), node::fenced);
            return node;
        } catch (RuntimeException | Error e) {
            database.close();
            throw e;
        }
    }

    /** Creates {@code dir}, or removes what a process that stopped while storing a tree left in it. */
    private static Path emptySpool(Path dir) {
        try {
            Files.createDirectories(dir);
            try (Stream<Path> left = Files.list(dir)) {
                for (Path file : left.toList()) {
                    Files.deleteIfExists(file);
                }
            }
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException("cluster: cannot prepare the spool directory " + dir, e);
        }
    }

    /** Opens a cluster database (gateways open one too). */
    public static PostgresDatabase open(ClusterDatabase database) {
        return PostgresDatabase.open(
                database.url(), database.user(), database.password().orElse(""));
    }

    /** The store of this node's registration. */
    public PostgresSandboxStore store() {
        return store;
    }

    /**
     * Where this node stores its paused states and snapshots for the other nodes (opened on the first call, closed
     * with the node); empty when the cluster names no shared storage.
     */
    public synchronized Optional<SharedArtifacts> sharedArtifacts() {
        if (config.sharedStorage().isEmpty()) {
            log.atWarn()
                    .addKeyValue("node", config.nodeId().value())
                    .log("cluster: no shared storage; paused sandboxes and snapshots are restored on their own node"
                            + " only");
        }
        return objectStore().map(SharedArtifacts.class::cast);
    }

    /**
     * Where the backend stores the template files its states are made on, in the same shared storage; empty when the
     * cluster names none.
     */
    public synchronized Optional<SharedFiles> backendFiles() {
        return objectStore().map(ObjectStoreArtifacts::backendFiles);
    }

    /** The cluster's shared storage, opened on the first call (closed with the node); empty when it names none. */
    private Optional<ObjectStoreArtifacts> objectStore() { // callers hold the lock
        if (config.sharedStorage().isPresent() && sharedArtifacts == null) {
            sharedArtifacts = new ObjectStoreArtifacts(
                    ObjectStoreArtifacts.open(config.sharedStorage().get()), spoolDir);
        }
        return Optional.ofNullable(sharedArtifacts);
    }

    /**
     * This node's place in the cluster for its {@code GET /metrics}: {@code aenv_node_info} (its id and address), the
     * epoch of its registration, its lease's length, when it was last renewed and how many renewals failed. A lone
     * server has none of these.
     */
    public MetricsSource metrics() {
        return out -> {
            String node = PrometheusText.labels("node", config.nodeId().value());
            PrometheusText.family(out, "aenv_node_info", "gauge", "This server is a node of a cluster (always 1).");
            PrometheusText.sample(
                    out,
                    "aenv_node_info",
                    PrometheusText.labels(
                            "node",
                            config.nodeId().value(),
                            "address",
                            config.address().toString()),
                    1);
            PrometheusText.family(
                    out, "aenv_node_epoch", "gauge", "The epoch of this node's registration (one more per start).");
            PrometheusText.sample(
                    out, "aenv_node_epoch", node, membership.token().epoch());
            PrometheusText.family(out, "aenv_node_lease_seconds", "gauge", "The length of this node's lease.");
            PrometheusText.sample(
                    out, "aenv_node_lease_seconds", node, config.leaseTtl().toMillis() / 1000.0);
            PrometheusText.family(
                    out,
                    "aenv_node_lease_renewed_timestamp_seconds",
                    "gauge",
                    "When this node last registered or renewed its lease (Unix time, the node's clock).");
            PrometheusText.sample(
                    out,
                    "aenv_node_lease_renewed_timestamp_seconds",
                    node,
                    membership.lastRenewed().toEpochMilli() / 1000.0);
            PrometheusText.family(
                    out,
                    "aenv_node_lease_renewal_failures_total",
                    "counter",
                    "Lease renewals that failed because the cluster's database could not be reached.");
            PrometheusText.sample(out, "aenv_node_lease_renewal_failures_total", node, membership.failedRenewals());
        };
    }

    /**
     * The node serves: its lease is renewed with {@code load}, and it sweeps for dead nodes. A refused renewal runs
     * {@code fenced} once: the cluster has declared this node dead or it runs again elsewhere, so nothing it would do
     * next could be kept (its sandboxes were reported lost or released). {@link #HALT} is what a server does. A
     * sandbox lost with a node this node declared dead gets its custom extension's stop hook, as a killed one does.
     */
    public synchronized void serve(Supplier<NodeLoad> load, Runnable fenced, LifecycleHooks hooks) {
        requireNonNull(load, "load is null");
        requireNonNull(fenced, "fenced is null");
        requireNonNull(hooks, "hooks is null");
        this.load = load;
        boolean early;
        synchronized (fencing) {
            onFenced = fenced;
            early = fencedEarly;
        }
        if (early) {
            fenced();
        }
        sweeper = new DeadNodeSweeper(
                registry, config.deadAfter(), config.leaseTtl().dividedBy(2), new LostSandboxHooks(hooks));
    }

    /** A renewal was refused: runs what {@link #serve} was given, or remembers it for then. */
    private void fenced() {
        Runnable action;
        synchronized (fencing) {
            action = onFenced;
            if (action == null) {
                fencedEarly = true;
            }
        }
        if (action == null) {
            log.atError()
                    .addKeyValue("node", config.nodeId().value())
                    .log("cluster: this node was fenced while starting; it stops once it serves");
            return;
        }
        log.atError().addKeyValue("node", config.nodeId().value()).log("cluster: this node was fenced; stopping");
        action.run();
    }

    /** Stops renewing the lease (and sweeping): the lease runs out and, after the grace, the node is declared dead. */
    public synchronized void stopRenewing() {
        if (sweeper != null) {
            sweeper.close();
            sweeper = null;
        }
        membership.close();
    }

    @Override
    public synchronized void close() {
        stopRenewing();
        try {
            store.close();
        } finally {
            database.close();
            if (sharedArtifacts != null) {
                sharedArtifacts.close();
            }
        }
    }
}
