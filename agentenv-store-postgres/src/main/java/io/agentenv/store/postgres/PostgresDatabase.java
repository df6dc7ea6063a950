package io.agentenv.store.postgres;

import static java.util.Objects.requireNonNull;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.StoreException;
import io.agentenv.store.jdbc.Cleanup;
import io.agentenv.store.jdbc.PreparedStatements;
import io.agentenv.store.jdbc.Transactions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.flywaydb.core.Flyway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's PostgreSQL database: a small HikariCP pool of connections, each unit of work one transaction on one of
 * them (READ COMMITTED, committed before the call returns). The schema is migrated by Flyway when the database is
 * opened ({@code db/migration/postgresql}; Flyway's lock lets several nodes open it at once). An outage makes calls
 * fail with {@link StoreException} within the settings' time limits instead of waiting for the database, and the pool
 * connects again once it is back (after a back-off of up to 5 s); a unit whose connection is lost before it commits
 * runs again on another one.
 * Thread-safe; close it after the stores built on it.
 */
public final class PostgresDatabase implements Transactions, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PostgresDatabase.class);
    private static final String MIGRATIONS = "classpath:db/migration/postgresql";
    /** SQLSTATEs of a session the server ended: admin_shutdown, crash_shutdown, cannot_connect_now. */
    private static final Set<String> SESSION_ENDED = Set.of("57P01", "57P02", "57P03");

    private final HikariDataSource pool;
    private final int poolSize;

    /**
     * Where the database is and how long a call may wait for it.
     *
     * @param jdbcUrl the database's JDBC URL ({@code jdbc:postgresql://host:port/name})
     * @param user the role to log in as
     * @param password its password
     * @param poolSize the most connections kept open
     * @param connectTimeout the longest a call waits for a connection (the database is down: it fails after that)
     * @param statementTimeout the longest one statement may run (lock waits included) before the database cancels it;
     *     a connection that answers nothing for twice as long is given up
     */
    public record Settings(
            String jdbcUrl,
            String user,
            String password,
            int poolSize,
            Duration connectTimeout,
            Duration statementTimeout) {
        public Settings {
            requireNonNull(jdbcUrl, "jdbcUrl is null");
            requireNonNull(user, "user is null");
            requireNonNull(password, "password is null");
            requireNonNull(connectTimeout, "connectTimeout is null");
            requireNonNull(statementTimeout, "statementTimeout is null");
            if (!jdbcUrl.startsWith("jdbc:postgresql:")) {
                throw new IllegalArgumentException("not a PostgreSQL JDBC URL: " + jdbcUrl);
            }
            if (poolSize < 1) {
                throw new IllegalArgumentException("poolSize must be >= 1");
            }
            if (connectTimeout.toMillis() < 250 || statementTimeout.toSeconds() < 1) {
                throw new IllegalArgumentException("connectTimeout must be >= 250 ms and statementTimeout >= 1 s");
            }
        }

        /** A pool of 8, waiting at most 3 s for a connection, statements cancelled after 10 s. */
        public static Settings of(String jdbcUrl, String user, String password) {
            return new Settings(jdbcUrl, user, password, 8, Duration.ofSeconds(3), Duration.ofSeconds(10));
        }

        @Override
        public String toString() {
            return "Settings[jdbcUrl=" + jdbcUrl + ", user=" + user + ", poolSize=" + poolSize + ", connectTimeout="
                    + connectTimeout + ", statementTimeout=" + statementTimeout + "]"; // no password
        }
    }

    private PostgresDatabase(HikariDataSource pool, int poolSize) {
        this.pool = pool;
        this.poolSize = poolSize;
    }

    /** Opens the database with {@link Settings#of} and migrates its schema. */
    public static PostgresDatabase open(String jdbcUrl, String user, String password) {
        return open(Settings.of(jdbcUrl, user, password));
    }

    /** Opens a pool on the database and migrates its schema; fails with {@link StoreException} if either fails. */
    public static PostgresDatabase open(Settings settings) {
        requireNonNull(settings, "settings is null");
        HikariDataSource pool;
        try {
            pool = new HikariDataSource(config(settings));
        } catch (RuntimeException e) { // Hikari's PoolInitializationException: the first connection failed
            throw new StoreException("cannot connect to the PostgreSQL store at " + settings.jdbcUrl(), e);
        }
        try {
            Flyway.configure()
                    .dataSource(pool)
                    .locations(MIGRATIONS)
                    .failOnMissingLocations(true)
                    .load()
                    .migrate();
            return new PostgresDatabase(pool, settings.poolSize());
        } catch (RuntimeException e) { // FlywayException, or the pool's
            pool.close();
            throw new StoreException("cannot migrate the PostgreSQL store at " + settings.jdbcUrl(), e);
        }
    }

    private static HikariConfig config(Settings settings) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("aenv-store-postgres");
        config.setJdbcUrl(settings.jdbcUrl());
        config.setUsername(settings.user());
        config.setPassword(settings.password());
        config.setMaximumPoolSize(settings.poolSize());
        config.setMinimumIdle(Math.min(2, settings.poolSize()));
        config.setAutoCommit(false);
        config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        config.setConnectionTimeout(settings.connectTimeout().toMillis());
        config.setValidationTimeout(Math.max(250, settings.connectTimeout().toMillis() / 2));
        config.setInitializationFailTimeout(settings.connectTimeout().toMillis());
        long statementSeconds = settings.statementTimeout().toSeconds();
        long connectSeconds = Math.max(1, settings.connectTimeout().toSeconds());
        // the driver's own limits (seconds): connecting, and a connection that answers nothing (a partition)
        config.addDataSourceProperty("connectTimeout", connectSeconds);
        config.addDataSourceProperty("loginTimeout", connectSeconds);
        config.addDataSourceProperty("socketTimeout", 2 * statementSeconds);
        config.addDataSourceProperty("tcpKeepAlive", true);
        config.addDataSourceProperty("ApplicationName", "agentenv");
        // the server's limit, set when the session starts (the unit's roll-back cannot undo it)
        config.addDataSourceProperty(
                "options", "-c statement_timeout=" + settings.statementTimeout().toMillis());
        return config;
    }

    @Override
    public <T> T read(String what, Object subject, Work<T> work) {
        requireNonNull(work, "work is null");
        return run(what, subject, false, work);
    }

    /**
     * {@link SandboxStore.Durability#WITH_NEXT_WRITE} commits with {@code synchronous_commit} off for this transaction
     * only ({@code SET LOCAL}): visible at once, made durable by the WAL writer or the next synchronous commit (which
     * flushes the WAL up to it).
     */
    @Override
    public <T> T write(String what, Object subject, SandboxStore.Durability durability, Work<T> work) {
        requireNonNull(durability, "durability is null");
        requireNonNull(work, "work is null");
        if (durability == SandboxStore.Durability.WITH_NEXT_WRITE) {
            return run(what, subject, true, s -> {
                s.prepared("SET LOCAL synchronous_commit TO OFF").execute();
                return work.run(s);
            });
        }
        return run(what, subject, true, work);
    }

    /**
     * Runs the unit; while its connection is lost before it commits, again on another one, at most once per pooled
     * connection (after a restart of the database every pooled connection may be cut; each is dropped once it fails).
     */
    private <T> T run(String what, Object subject, boolean commit, Work<T> work) {
        try {
            ConnectionLost first = null;
            for (int attempt = 0; attempt <= poolSize; attempt++) {
                try {
                    return once(commit, work);
                } catch (ConnectionLost e) {
                    log.atDebug()
                            .addKeyValue("unit", Transactions.describe(what, subject))
                            .log("a store connection was lost before the unit committed; it runs again");
                    if (first == null) {
                        first = e;
                    } else {
                        first.getCause().addSuppressed(e.getCause());
                    }
                }
            }
            throw first.getCause();
        } catch (SQLException e) {
            throw new StoreException("store failed to " + Transactions.describe(what, subject), e);
        }
    }

    /**
     * The unit on a pooled connection. A connection lost while the work ran (before the commit was sent) is thrown as
     * {@link ConnectionLost}; a commit that fails is not (whether the database committed is then unknown).
     */
    private <T> T once(boolean commit, Work<T> work) throws SQLException, ConnectionLost {
        Connection connection = pool.getConnection();
        try (connection;
                UnitStatements statements = new UnitStatements(connection)) {
            T value;
            try {
                value = work.run(statements);
            } catch (SQLException e) {
                Cleanup.rollbackQuietly(connection, e);
                if (lost(e)) {
                    throw new ConnectionLost(e);
                }
                throw e;
            } catch (RuntimeException | Error e) {
                Cleanup.rollbackQuietly(connection, e);
                throw e;
            }
            if (commit) {
                connection.commit();
            } else {
                connection.rollback(); // ends the read's transaction
            }
            return value;
        }
    }

    /** A connection error, or the server ending the session (shutdown, crash, restart). */
    private static boolean lost(SQLException e) {
        String state = e.getSQLState();
        return state != null && (state.startsWith("08") || SESSION_ENDED.contains(state));
    }

    /** Closes the pool; calls after this fail with {@link StoreException}. */
    @Override
    public void close() {
        pool.close();
    }

    /** The work's connection was lost before its commit: it may run again. */
    private static final class ConnectionLost extends Exception {
        ConnectionLost(SQLException cause) {
            super(cause);
        }

        @Override
        public synchronized SQLException getCause() {
            return (SQLException) super.getCause();
        }
    }

    /**
     * One unit's statements, each prepared once per unit and closed with it (the driver keeps the server-side
     * prepared statements per connection, by their SQL, across units).
     */
    private static final class UnitStatements implements PreparedStatements, AutoCloseable {
        private final Connection connection;
        private final Map<String, PreparedStatement> prepared = new HashMap<>();

        UnitStatements(Connection connection) {
            this.connection = connection;
        }

        @Override
        public PreparedStatement prepared(String sql) throws SQLException {
            PreparedStatement statement = prepared.get(sql);
            if (statement == null) {
                statement = connection.prepareStatement(sql);
                prepared.put(sql, statement);
            }
            return statement;
        }

        @Override
        public Connection connection() {
            return connection;
        }

        @Override
        public void close() throws SQLException {
            Cleanup.closeAll(prepared.values());
        }
    }
}
