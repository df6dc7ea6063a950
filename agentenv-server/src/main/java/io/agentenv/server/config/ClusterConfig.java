package io.agentenv.server.config;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.NodeId;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * A node's place in a cluster; a server without {@code AENV_CLUSTER_DATABASE_URL} runs alone on its SQLite store.
 *
 * @param database the cluster's database
 * @param nodeId this node's name ({@code AENV_NODE_ID}, required in a cluster)
 * @param address the URL gateways reach this node's one port at ({@code AENV_NODE_ADDRESS}, required in a cluster,
 *     {@code http://host:port})
 * @param leaseTtl how long a renewal keeps the node's lease ({@code AENV_CLUSTER_LEASE_SECONDS}, default 10; renewed
 *     every third of it)
 * @param deadAfter how long after its lease ran out a node is declared dead
 *     ({@code AENV_CLUSTER_DEAD_AFTER_SECONDS}, default 20)
 * @param sharedStorage where paused states and snapshots are kept for every node ({@link SharedStorageConfig});
 *     empty: on this node's disk only, so they are restored only here
 */
public record ClusterConfig(
        ClusterDatabase database,
        NodeId nodeId,
        URI address,
        Duration leaseTtl,
        Duration deadAfter,
        Optional<SharedStorageConfig> sharedStorage) {
    public static final String NODE_ID = "AENV_NODE_ID";
    public static final String NODE_ADDRESS = "AENV_NODE_ADDRESS";
    public static final String LEASE_SECONDS = "AENV_CLUSTER_LEASE_SECONDS";
    public static final String DEAD_AFTER_SECONDS = "AENV_CLUSTER_DEAD_AFTER_SECONDS";

    public ClusterConfig {
        requireNonNull(database, "database is null");
        requireNonNull(nodeId, "nodeId is null");
        requireNonNull(address, "address is null");
        requireNonNull(leaseTtl, "leaseTtl is null");
        requireNonNull(deadAfter, "deadAfter is null");
        requireNonNull(sharedStorage, "sharedStorage is null");
        if (!("http".equals(address.getScheme()) || "https".equals(address.getScheme()))
                || address.getHost() == null
                || address.getPort() < 1
                || !(address.getRawPath() == null || address.getRawPath().isEmpty())) {
            throw new IllegalArgumentException(NODE_ADDRESS + " must be http(s)://host:port with no path: " + address);
        }
        if (leaseTtl.compareTo(Duration.ofSeconds(3)) < 0 || deadAfter.isNegative()) {
            throw new IllegalArgumentException(
                    LEASE_SECONDS + " must be >= 3 and " + DEAD_AFTER_SECONDS + " must be >= 0");
        }
    }

    /** The node's cluster settings when a cluster database is named; fails when the node's own are missing. */
    static Optional<ClusterConfig> from(Map<String, String> values) {
        Optional<ClusterDatabase> database = ClusterDatabase.from(values);
        Optional<SharedStorageConfig> sharedStorage = SharedStorageConfig.from(values);
        if (database.isEmpty()) {
            if (sharedStorage.isPresent()) {
                throw new IllegalArgumentException("shared storage (" + SharedStorageConfig.DIR + ", "
                        + SharedStorageConfig.S3_BUCKET + ") is for the nodes of a cluster; set "
                        + ClusterDatabase.URL + " too");
            }
            return Optional.empty();
        }
        String nodeId = values.get(NODE_ID);
        String address = values.get(NODE_ADDRESS);
        if (nodeId == null || address == null) {
            throw new IllegalArgumentException("a node of a cluster (" + ClusterDatabase.URL + " is set) needs "
                    + NODE_ID + " and " + NODE_ADDRESS);
        }
        return Optional.of(new ClusterConfig(
                database.get(),
                new NodeId(nodeId),
                URI.create(address),
                Duration.ofSeconds(ServerConfig.parseInt(values, LEASE_SECONDS, 10)),
                Duration.ofSeconds(ServerConfig.parseInt(values, DEAD_AFTER_SECONDS, 20)),
                sharedStorage));
    }
}
