package io.agentenv.store.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * The statements of one unit of work's connection. A statement from {@link #prepared} is kept by the store (for the
 * unit, or for the connection's life) and never closed by its user: every use binds all its parameters, and a result
 * set taken from it is closed before the statement is used again.
 */
public interface PreparedStatements {
    /** The statement for {@code sql}, prepared on its first use; do not close it. */
    PreparedStatement prepared(String sql) throws SQLException;

    /** For statements built per call (list filters): the caller prepares and closes them. */
    Connection connection();
}
