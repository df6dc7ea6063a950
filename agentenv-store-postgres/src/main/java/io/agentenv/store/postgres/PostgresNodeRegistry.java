package io.agentenv.store.postgres;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.ClusterCensus;
import io.agentenv.cluster.FencingToken;
import io.agentenv.cluster.LostSandbox;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.NodeInfo;
import io.agentenv.cluster.NodeLoad;
import io.agentenv.cluster.NodeRegistry;
import io.agentenv.cluster.NodeState;
import io.agentenv.orchestrator.SandboxStore.Durability;
import io.agentenv.store.jdbc.PreparedStatements;
import io.agentenv.store.jdbc.Rows;
import java.net.URI;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link NodeRegistry} on the cluster's {@code node} table; lease times are the database's {@code now()}. Registering
 * again and declaring a node dead lock the node's row for update: they wait for the sandbox writes that hold it (an
 * insert or a take-over, see {@link PostgresSandboxStore}), and those writes see the new epoch or the death after
 * them. An operator's drain is kept in its own column ({@code drained}), apart from the state a death overwrites: it
 * outlives re-registrations and deaths alike, until {@code ready} clears it; a node that registers again is DRAINING
 * while drained, else ACTIVE.
 */
public final class PostgresNodeRegistry implements NodeRegistry, ClusterCensus {
    private static final Logger log = LoggerFactory.getLogger(PostgresNodeRegistry.class);

    private static final String LOCK = "SELECT 1 FROM node WHERE id = ? FOR UPDATE";
    private static final String REGISTER =
            "INSERT INTO node (" + ClusterRows.NODE_COLUMNS + ") VALUES (?, ?, 'ACTIVE', 1, "
                    + "now() + ? * INTERVAL '1 millisecond', now(), ?) ON CONFLICT (id) DO UPDATE SET "
                    + "address = excluded.address, epoch = node.epoch + 1, "
                    + "state = CASE WHEN node.drained THEN 'DRAINING' ELSE 'ACTIVE' END, "
                    + "lease_until = excluded.lease_until, registered_at = excluded.registered_at, "
                    + "load = excluded.load RETURNING epoch";
    private static final String RENEW = "UPDATE node SET lease_until = now() + ? * INTERVAL '1 millisecond', "
            + "load = ? WHERE id = ? AND epoch = ? AND state <> 'DEAD'";
    private static final String NODES = "SELECT " + ClusterRows.NODE_COLUMNS + " FROM node ORDER BY id";
    private static final String FIND = "SELECT " + ClusterRows.NODE_COLUMNS + " FROM node WHERE id = ?";
    private static final String DRAIN = "UPDATE node SET state = ?, drained = ? WHERE id = ? AND state <> 'DEAD'";
    private static final String EXPIRED = "SELECT id FROM node WHERE state IN ('ACTIVE', 'DRAINING') "
            + "AND lease_until < now() - ? * INTERVAL '1 millisecond' ORDER BY id";
    private static final String LOCK_EXPIRED =
            "SELECT epoch FROM node WHERE id = ? AND state IN ('ACTIVE', 'DRAINING') "
                    + "AND lease_until < now() - ? * INTERVAL '1 millisecond' FOR UPDATE";
    private static final String KILL = "UPDATE node SET state = 'DEAD' WHERE id = ?";
    private static final String LOSE = "WITH gone AS (DELETE FROM sandbox WHERE node_id = ? AND state <> 'PAUSED' "
            + "RETURNING id, template, state, metadata, instance_id) "
            + "INSERT INTO lost_sandbox (" + ClusterRows.LOST_COLUMNS + ") "
            + "SELECT id, ?, template, state, metadata, instance_id, ?, now() FROM gone "
            + "ON CONFLICT (id) DO UPDATE SET node = excluded.node, template = excluded.template, "
            + "state = excluded.state, metadata = excluded.metadata, instance_id = excluded.instance_id, "
            + "reason = excluded.reason, "
            + "lost_at = excluded.lost_at RETURNING " + ClusterRows.LOST_COLUMNS;
    private static final String COUNTS = "SELECT node_id, state, count(*) FROM sandbox GROUP BY node_id, state "
            + "UNION ALL SELECT NULL, 'LOST', count(*) FROM lost_sandbox";
    private static final String RELEASE = "UPDATE sandbox SET node_id = NULL, node_epoch = NULL, version = version + 1 "
            + "WHERE node_id = ? AND state = 'PAUSED' RETURNING id";

    private final PostgresDatabase db;

    public PostgresNodeRegistry(PostgresDatabase db) {
        this.db = requireNonNull(db, "db is null");
    }

    @Override
    public FencingToken register(NodeId node, URI address, NodeLoad load, Duration ttl) {
        requireNonNull(node, "node is null");
        requireNonNull(address, "address is null");
        requireNonNull(load, "load is null");
        long ttlMillis = lease(ttl);
        long epoch = db.write("register node", node, Durability.NOW, s -> {
            PreparedStatement lock = s.prepared(LOCK);
            lock.setString(1, node.value());
            lock.executeQuery().close();
            PreparedStatement st = s.prepared(REGISTER);
            st.setString(1, node.value());
            st.setString(2, address.toString());
            st.setLong(3, ttlMillis);
            Rows.bindJson(st, 4, ClusterRows.load(load));
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("the node's row returned no epoch");
                }
                return rs.getLong(1);
            }
        });
        log.atInfo()
                .addKeyValue("node", node)
                .addKeyValue("epoch", epoch)
                .addKeyValue("address", address)
                .log("node registered");
        return new FencingToken(node, epoch);
    }

    @Override
    public boolean renew(FencingToken token, NodeLoad load, Duration ttl) {
        requireNonNull(token, "token is null");
        requireNonNull(load, "load is null");
        long ttlMillis = lease(ttl);
        return db.write("renew the lease of node", token.node(), Durability.NOW, s -> {
            PreparedStatement st = s.prepared(RENEW);
            st.setLong(1, ttlMillis);
            Rows.bindJson(st, 2, ClusterRows.load(load));
            st.setString(3, token.node().value());
            st.setLong(4, token.epoch());
            return st.executeUpdate() == 1;
        });
    }

    @Override
    public List<NodeInfo> nodes() {
        return db.read("list nodes", s -> Rows.all(s.prepared(NODES), ClusterRows::node));
    }

    /** Two queries in one transaction: the nodes, and the sandboxes counted by owner and state with the lost ones. */
    @Override
    public Census census() {
        return db.read("read the cluster's census", "cluster", s -> {
            List<NodeInfo> nodes = Rows.all(s.prepared(NODES), ClusterRows::node);
            Map<NodeId, Map<String, Long>> sandboxes = new HashMap<>();
            long unowned = 0;
            long lost = 0;
            try (ResultSet rs = s.prepared(COUNTS).executeQuery()) {
                while (rs.next()) {
                    String node = rs.getString(1);
                    String state = rs.getString(2);
                    long count = rs.getLong(3);
                    if (node != null) {
                        sandboxes
                                .computeIfAbsent(new NodeId(node), k -> new HashMap<>())
                                .put(state, count);
                    } else if (state.equals("LOST")) {
                        lost = count;
                    } else {
                        unowned += count;
                    }
                }
            }
            return new Census(nodes, sandboxes, unowned, lost);
        });
    }

    @Override
    public Optional<NodeInfo> find(NodeId node) {
        requireNonNull(node, "node is null");
        return db.read("find node", node, s -> {
            PreparedStatement st = s.prepared(FIND);
            st.setString(1, node.value());
            return Rows.first(st, rs -> ClusterRows.node(rs));
        });
    }

    @Override
    public boolean setDraining(NodeId node, boolean draining) {
        requireNonNull(node, "node is null");
        boolean changed = db.write(draining ? "drain node" : "undrain node", node, Durability.NOW, s -> {
            PreparedStatement st = s.prepared(DRAIN);
            st.setString(1, (draining ? NodeState.DRAINING : NodeState.ACTIVE).name());
            st.setBoolean(2, draining);
            st.setString(3, node.value());
            return st.executeUpdate() == 1;
        });
        if (changed) {
            log.atInfo().addKeyValue("node", node).log(draining ? "node draining" : "node no longer draining");
        }
        return changed;
    }

    /**
     * Finds the nodes whose lease ended more than {@code grace} ago, then declares each dead in a transaction of its
     * own that first locks the node's row and checks again: of several callers at once, one declares the node dead
     * and reports it; the others find it dead (or renewed) once they get the lock, and skip it.
     */
    @Override
    public List<DeadNode> declareDead(Duration grace, String reason) {
        requireNonNull(reason, "reason is null");
        long graceMillis = ClusterRows.millis(requireNonNull(grace, "grace is null"), "grace");
        List<NodeId> expired = db.read("find nodes whose lease ran out", s -> {
            PreparedStatement st = s.prepared(EXPIRED);
            st.setLong(1, graceMillis);
            return Rows.all(st, rs -> new NodeId(rs.getString(1)));
        });
        List<DeadNode> dead = new ArrayList<>();
        for (NodeId node : expired) {
            Optional<DeadNode> declared =
                    db.write("declare dead node", node, Durability.NOW, s -> declare(s, node, graceMillis, reason));
            declared.ifPresent(d -> {
                log.atWarn()
                        .addKeyValue("node", d.node())
                        .addKeyValue("epoch", d.epoch())
                        .addKeyValue("lost", d.lost().size())
                        .addKeyValue("released", d.released().size())
                        .addKeyValue("reason", reason)
                        .log("node declared dead");
                dead.add(d);
            });
        }
        return dead;
    }

    private static Optional<DeadNode> declare(PreparedStatements s, NodeId node, long graceMillis, String reason)
            throws SQLException {
        PreparedStatement lock = s.prepared(LOCK_EXPIRED);
        lock.setString(1, node.value());
        lock.setLong(2, graceMillis);
        long epoch;
        try (ResultSet rs = lock.executeQuery()) {
            if (!rs.next()) {
                return Optional.empty(); // declared dead by another caller, or renewed meanwhile
            }
            epoch = rs.getLong(1);
        }
        PreparedStatement kill = s.prepared(KILL);
        kill.setString(1, node.value());
        kill.executeUpdate();
        PreparedStatement lose = s.prepared(LOSE);
        lose.setString(1, node.value());
        lose.setString(2, node.value());
        lose.setString(3, reason);
        List<LostSandbox> lost = new ArrayList<>(Rows.all(lose, ClusterRows::lost));
        lost.sort(Comparator.comparing(LostSandbox::sandboxId));
        PreparedStatement release = s.prepared(RELEASE);
        release.setString(1, node.value());
        List<String> released = new ArrayList<>(Rows.all(release, rs -> rs.getString(1)));
        released.sort(Comparator.naturalOrder());
        return Optional.of(new DeadNode(node, epoch, lost, released));
    }

    private static long lease(Duration ttl) {
        requireNonNull(ttl, "ttl is null");
        if (ttl.isZero() || ttl.isNegative()) {
            throw new IllegalArgumentException("ttl must be positive");
        }
        return ttl.toMillis();
    }
}
