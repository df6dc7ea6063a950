package io.agentenv.store.postgres;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.LostSandbox;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.SandboxOwners;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.store.jdbc.Rows;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * {@link SandboxOwners} from the cluster's database: the sandbox rows' owners, the lost sandboxes' records, and the
 * token seed (read only: the first node stores it).
 */
public final class PostgresSandboxOwners implements SandboxOwners {
    private static final String OWNER = "SELECT node_id, state FROM sandbox WHERE id = ?";
    private static final String LOST = "SELECT " + ClusterRows.LOST_COLUMNS + " FROM lost_sandbox WHERE id = ?";
    private static final String OWNERS = "SELECT id, node_id, state FROM sandbox WHERE id = ANY (?)";
    private static final String RUNNING =
            "SELECT id, node_id FROM sandbox WHERE state = 'RUNNING' AND node_id IS NOT NULL";
    private static final String SEED = "SELECT value FROM secret WHERE name = 'token_seed'";

    private final PostgresDatabase db;

    public PostgresSandboxOwners(PostgresDatabase db) {
        this.db = requireNonNull(db, "db is null");
    }

    @Override
    public Optional<Ownership> owner(String sandboxId) {
        requireNonNull(sandboxId, "sandboxId is null");
        return db.read("find the owner of", sandboxId, s -> {
            PreparedStatement st = s.prepared(OWNER);
            st.setString(1, sandboxId);
            return Rows.first(
                    st,
                    rs -> new Ownership(
                            Optional.ofNullable(rs.getString(1)).map(NodeId::new),
                            SandboxState.PAUSED.name().equals(rs.getString(2))));
        });
    }

    @Override
    public Map<String, Ownership> owners(Collection<String> sandboxIds) {
        requireNonNull(sandboxIds, "sandboxIds is null");
        if (sandboxIds.isEmpty()) {
            return Map.of();
        }
        return db.read("find the owners of", sandboxIds.size() + " sandboxes", s -> {
            PreparedStatement st = s.prepared(OWNERS);
            st.setArray(1, st.getConnection().createArrayOf("text", sandboxIds.toArray()));
            Map<String, Ownership> found = new LinkedHashMap<>();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    found.put(
                            rs.getString(1),
                            new Ownership(
                                    Optional.ofNullable(rs.getString(2)).map(NodeId::new),
                                    SandboxState.PAUSED.name().equals(rs.getString(3))));
                }
            }
            return found;
        });
    }

    @Override
    public Map<String, NodeId> running() {
        return db.read("list the running sandboxes", "cluster", s -> {
            Map<String, NodeId> found = new LinkedHashMap<>();
            try (ResultSet rs = s.prepared(RUNNING).executeQuery()) {
                while (rs.next()) {
                    found.put(rs.getString(1), new NodeId(rs.getString(2)));
                }
            }
            return found;
        });
    }

    @Override
    public Optional<String> tokenSeed() {
        return db.read("read the token seed", "cluster", s -> Rows.first(s.prepared(SEED), rs -> rs.getString(1)));
    }

    @Override
    public Optional<LostSandbox> lost(String sandboxId) {
        requireNonNull(sandboxId, "sandboxId is null");
        return db.read("find the lost sandbox", sandboxId, s -> {
            PreparedStatement st = s.prepared(LOST);
            st.setString(1, sandboxId);
            return Rows.first(st, rs -> ClusterRows.lost(rs));
        });
    }
}
