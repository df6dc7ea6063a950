package io.agentenv.store.sqlite;

import static java.util.Objects.requireNonNull;

import io.agentenv.store.jdbc.Cleanup;
import io.agentenv.store.jdbc.PreparedStatements;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The connection's prepared statements, kept by their SQL text: a statement is compiled once and reused (SQLite's
 * compile, {@code prepare_utf8}, was ~2 % of the server's samples in a burst of creates when every call prepared its
 * own). Used under {@link Database}'s connection lock only, by one thread at a time, like the connection. A cached
 * statement is never closed by its user: it is reset when its result set is closed or its update has run, and every
 * use binds all its parameters. At most {@link #LIMIT} are kept (least recently used closed first); SQL built from
 * a query's filters goes through {@link #connection()} and is closed by its user, so it does not churn the cache.
 */
final class Statements implements PreparedStatements, AutoCloseable {
    static final int LIMIT = 64;

    private final Connection connection;
    private final LinkedHashMap<String, PreparedStatement> cached = new LinkedHashMap<>(32, 0.75f, true);
    private long compiled;
    private long uses;

    Statements(Connection connection) {
        this.connection = requireNonNull(connection, "connection is null");
    }

    /** The statement for {@code sql}, compiled on its first use; do not close it. */
    @Override
    public PreparedStatement prepared(String sql) throws SQLException {
        uses++;
        PreparedStatement statement = cached.get(sql);
        if (statement != null) {
            return statement;
        }
        statement = connection.prepareStatement(sql);
        compiled++;
        cached.put(sql, statement);
        if (cached.size() > LIMIT) {
            Map.Entry<String, PreparedStatement> eldest = cached.firstEntry();
            cached.remove(eldest.getKey());
            eldest.getValue().close();
        }
        return statement;
    }

    /** For statements built per call (list filters) and schema work: the caller prepares and closes them. */
    @Override
    public Connection connection() {
        return connection;
    }

    /** Statements compiled by {@link #prepared} so far (tests and benchmarks: the cache is used). */
    long compiled() {
        return compiled;
    }

    /** Calls of {@link #prepared} so far: the statements the store ran through the cache. */
    long uses() {
        return uses;
    }

    /** Statements kept right now. */
    int size() {
        return cached.size();
    }

    /** Closes every kept statement (before the connection is closed). */
    @Override
    public void close() throws SQLException {
        try {
            Cleanup.closeAll(cached.values());
        } finally {
            cached.clear();
        }
    }
}
