package io.agentenv.store.postgres;

import io.agentenv.cluster.FencingToken;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.NodeLoad;
import io.agentenv.orchestrator.SandboxStore;
import java.net.URI;
import java.sql.PreparedStatement;
import java.time.Duration;

/**
 * A test's database on the shared test server, the store's pool on it, and its nodes: registering one and opening its
 * sandbox store is a node starting. Closing it closes the pool and drops the database.
 */
final class TestCluster implements AutoCloseable {
    /** A lease long enough for any test; tests that need one ended set it in the past ({@link #endLease}). */
    static final Duration LEASE = Duration.ofMinutes(5);

    private final PostgresServer.TestDatabase database;
    private PostgresDatabase db;

    private TestCluster(PostgresServer.TestDatabase database) {
        this.database = database;
    }

    /** A fresh database on the JVM's test server. */
    static TestCluster create() {
        return new TestCluster(PostgresServer.shared().newDatabase());
    }

    /** The database itself: its URL and credentials. */
    PostgresServer.TestDatabase database() {
        return database;
    }

    /** The pool, opened (and the schema migrated) on first use and after {@link #closeDatabase()}. */
    PostgresDatabase db() {
        if (db == null) {
            db = database.open();
        }
        return db;
    }

    /** Closes the pool, as a stopping process does; the next {@link #db()} opens a new one on the same data. */
    void closeDatabase() {
        if (db != null) {
            db.close();
            db = null;
        }
    }

    PostgresNodeRegistry registry() {
        return new PostgresNodeRegistry(db());
    }

    /** Registers {@code node} (again): its next epoch. */
    FencingToken register(NodeId node) {
        return registry().register(node, URI.create("http://" + node + ".test:8080"), NodeLoad.UNKNOWN, LEASE);
    }

    /** The node starts: it registers and opens its store, which adopts its rows. */
    PostgresSandboxStore start(NodeId node) {
        return PostgresSandboxStore.open(db(), register(node));
    }

    /** Sets the node's lease to have ended {@code ago} before the database's now. */
    void endLease(NodeId node, Duration ago) {
        db().write("end the lease of", node, SandboxStore.Durability.NOW, s -> {
            PreparedStatement st =
                    s.prepared("UPDATE node SET lease_until = now() - ? * INTERVAL '1 millisecond' WHERE id = ?");
            st.setLong(1, ago.toMillis());
            st.setString(2, node.value());
            return st.executeUpdate();
        });
    }

    @Override
    public void close() {
        try {
            closeDatabase();
        } finally {
            database.close();
        }
    }
}
