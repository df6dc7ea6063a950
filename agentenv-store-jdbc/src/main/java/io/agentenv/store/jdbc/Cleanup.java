package io.agentenv.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collection;

/** Ending a unit of work's JDBC resources without losing the failure that ended it. */
public final class Cleanup {
    private Cleanup() {}

    /** Rolls back; a failure of the roll-back is added to {@code failure} (the one the caller goes on to throw). */
    public static void rollbackQuietly(Connection connection, Throwable failure) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }

    /** Closes every statement; the first failure is thrown once all were tried, the later ones suppressed in it. */
    public static void closeAll(Collection<? extends Statement> statements) throws SQLException {
        SQLException first = null;
        for (Statement statement : statements) {
            try {
                statement.close();
            } catch (SQLException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
