package io.agentenv.store.postgres;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.NodeId;
import io.agentenv.orchestrator.TemplateBuildStore;
import io.agentenv.store.jdbc.JdbcTemplateBuildStore;
import io.agentenv.store.jdbc.PreparedStatements;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Optional;

/**
 * {@link TemplateBuildStore} in the cluster's database, seen from one node: the templates, builds, tags, logs and
 * cached layers are the cluster's, each build row records the node that runs it, and {@link #unfinishedBuilds()} is
 * that node's only (what its restart has to fail).
 */
public final class PostgresTemplateBuildStore extends JdbcTemplateBuildStore {
    private static final String LOCK_BUILD = "SELECT 1 FROM template_build WHERE id = ? FOR NO KEY UPDATE";

    public PostgresTemplateBuildStore(PostgresDatabase db, NodeId node) {
        super(db, Optional.of(requireNonNull(node, "node is null").value()));
    }

    /**
     * Lines of one build written on several connections at once take turns: the build's row stays locked until the
     * line is committed, so each reads the index the line before it wrote.
     */
    @Override
    protected void beforeAppend(PreparedStatements statements, String buildId) throws SQLException {
        PreparedStatement st = statements.prepared(LOCK_BUILD);
        st.setString(1, buildId);
        st.executeQuery().close();
    }
}
