package io.agentenv.store.postgres;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.LostSandbox;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.SandboxOwners;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.store.jdbc.Rows;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.Optional;

/** {@link SandboxOwners} from the cluster's database: the sandbox rows' owners and the lost sandboxes' records. */
public final class PostgresSandboxOwners implements SandboxOwners {
    private static final String OWNER = "SELECT node_id, state FROM sandbox WHERE id = ?";
    private static final String LOST = "SELECT " + ClusterRows.LOST_COLUMNS + " FROM lost_sandbox WHERE id = ?";
    private static final String RUNNING = "SELECT id FROM sandbox WHERE state = 'RUNNING'";
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
    public Optional<LostSandbox> lost(String sandboxId) {
        requireNonNull(sandboxId, "sandboxId is null");
        return db.read("find the lost sandbox", sandboxId, s -> {
            PreparedStatement st = s.prepared(LOST);
            st.setString(1, sandboxId);
            return Rows.first(st, rs -> ClusterRows.lost(rs));
        });
    }

    @Override
    public List<String> running() {
        return db.read(
                "list the running sandboxes", "sandbox", s -> Rows.all(s.prepared(RUNNING), rs -> rs.getString(1)));
    }

    @Override
    public Optional<String> tokenSeed() {
        return db.read("read the token seed", "secret", s -> Rows.first(s.prepared(SEED), rs -> rs.getString(1)));
    }
}
