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
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
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
 * runs again on another one, and one whose connection is lost while it commits asks the database (by its transaction
 * id) whether it committed before it answers or runs again, so a restart never turns a change that was made into a
 * failure.
 * Thread-safe; close it after the stores built on it.
 */
public final class PostgresDatabase implements Transactions, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PostgresDatabase.class);
    private static final String MIGRATIONS = "classpath:db/migration/postgresql";
    /** SQLSTATEs of a session the server ended: admin_shutdown, crash_shutdown, cannot_connect_now. */
    private static final Set<String> SESSION_ENDED = Set.of("57P01", "57P02", "57P03");

    /** Whether a transaction committed, by the id {@link Unit#WRITE} learned ({@code committed}, {@code aborted}, ...). */
    private static final String TRANSACTION_STATUS = "SELECT pg_xact_status(?::xid8)";

    private static final Duration IN_DOUBT_POLL = Duration.ofMillis(50);

    private final HikariDataSource pool;
    private final int poolSize;
    /** How long a unit whose commit lost its connection asks whether it committed: twice the connect timeout. */
    private final Duration inDoubtTimeout;

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

    private PostgresDatabase(HikariDataSource pool, Settings settings) {
        this.pool = pool;
        this.poolSize = settings.poolSize();
        this.inDoubtTimeout = settings.connectTimeout().multipliedBy(2);
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
            return new PostgresDatabase(pool, settings);
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
        return run(what, subject, Unit.READ, work);
    }

    /**
     * {@link SandboxStore.Durability#WITH_NEXT_WRITE} commits with {@code synchronous_commit} off for this transaction
     * only (set locally): visible at once, made durable by the WAL writer or the next synchronous commit (which flushes
     * the WAL up to it).
     */
    @Override
    public <T> T write(String what, Object subject, SandboxStore.Durability durability, Work<T> work) {
        requireNonNull(durability, "durability is null");
        requireNonNull(work, "work is null");
        return run(
                what,
                subject,
                durability == SandboxStore.Durability.WITH_NEXT_WRITE ? Unit.WRITE_ASYNC : Unit.WRITE,
                work);
    }

    /**
     * Runs the unit; while its connection is lost before it commits, again on another one, at most once per pooled
     * connection (after a restart of the database every pooled connection may be cut; each is dropped once it fails).
     * A connection lost while it commits leaves the outcome in doubt: the database is asked on another connection
     * whether the unit's transaction committed ({@link #committed}); if it did, its value is returned, if it did not,
     * the unit runs again.
     */
    private <T> T run(String what, Object subject, Unit unit, Work<T> work) {
        String name = Transactions.describe(what, subject);
        SQLException first = null;
        try {
            for (int attempt = 0; attempt <= poolSize; attempt++) {
                SQLException lost;
                switch (once(unit, work)) {
                    case Attempt.Done<T> done -> {
                        return done.value();
                    }
                    case Attempt.Lost<T> before -> {
                        lost = before.cause();
                        log.atDebug()
                                .addKeyValue("unit", name)
                                .log("a store connection was lost before the unit committed; it runs again");
                    }
                    case Attempt.InDoubt<T> doubt -> {
                        if (committed(doubt, name)) {
                            log.atInfo()
                                    .addKeyValue("unit", name)
                                    .log("a store connection was lost while the unit committed; it had committed");
                            return doubt.value();
                        }
                        lost = doubt.cause();
                        log.atInfo()
                                .addKeyValue("unit", name)
                                .log(
                                        "a store connection was lost while the unit committed; it had not, and runs again");
                    }
                }
                if (first == null) {
                    first = lost;
                } else {
                    first.addSuppressed(lost);
                }
            }
            throw requireNonNull(first);
        } catch (SQLException e) {
            throw new StoreException("store failed to " + name, e);
        }
    }

    /**
     * The unit on a pooled connection. A write first learns its transaction's id (one statement, which for
     * {@link Unit#WRITE_ASYNC} also turns synchronous commit off). A connection lost while the work ran (before the
     * commit was sent) is {@link Attempt.Lost}; one lost while it committed is {@link Attempt.InDoubt}; any other
     * failure is thrown.
     */
    private <T> Attempt<T> once(Unit unit, Work<T> work) throws SQLException {
        Connection connection = pool.getConnection();
        try (connection;
                UnitStatements statements = new UnitStatements(connection)) {
            T value;
            String transaction;
            try {
                transaction = unit.begin == null ? null : transactionId(statements, unit.begin);
                value = work.run(statements);
            } catch (SQLException e) {
                Cleanup.rollbackQuietly(connection, e);
                if (lost(e)) {
                    return new Attempt.Lost<>(e);
                }
                throw e;
            } catch (RuntimeException | Error e) {
                Cleanup.rollbackQuietly(connection, e);
                throw e;
            }
            if (transaction == null) {
                connection.rollback(); // ends the read's transaction
                return new Attempt.Done<>(value);
            }
            try {
                connection.commit();
            } catch (SQLException e) {
                if (lost(e)) {
                    return new Attempt.InDoubt<>(value, transaction, e);
                }
                throw e;
            }
            return new Attempt.Done<>(value);
        }
    }

    private static String transactionId(PreparedStatements statements, String begin) throws SQLException {
        try (ResultSet row = statements.prepared(begin).executeQuery()) {
            row.next();
            return row.getString(1);
        }
    }

    /**
     * Whether the transaction of a unit whose commit lost its connection committed, asked on other connections until
     * {@link #inDoubtTimeout} has passed (a restarted database answers once it is back). Throws {@link SQLException}
     * (the commit's failure, with the later ones suppressed in it) when the database cannot tell within that time.
     */
    private boolean committed(Attempt.InDoubt<?> doubt, String name) throws SQLException {
        long deadline = System.nanoTime() + inDoubtTimeout.toNanos();
        SQLException failure = doubt.cause();
        while (true) {
            Optional<String> answer = Optional.empty(); // empty: not asked (no connection)
            try (Connection connection = pool.getConnection();
                    PreparedStatement status = connection.prepareStatement(TRANSACTION_STATUS)) {
                status.setString(1, doubt.transaction());
                try (ResultSet row = status.executeQuery()) {
                    row.next();
                    answer = Optional.of(String.valueOf(row.getString(1)));
                }
                connection.rollback();
            } catch (SQLException e) {
                failure.addSuppressed(e);
            }
            switch (answer.orElse("")) {
                case "committed" -> {
                    return true;
                }
                case "aborted" -> {
                    return false;
                }
                case "null" -> // too old for the database to remember: cannot happen within seconds
                    throw new SQLException(
                            "the database no longer knows whether " + name + " committed",
                            failure.getSQLState(),
                            failure);
                default -> {} // not asked, or "in progress": the session that lost its connection has not ended yet
            }
            if (System.nanoTime() - deadline > 0) {
                throw new SQLException(
                        "whether " + name + " committed is unknown: its connection was lost while it committed, and"
                                + " the database could not tell within " + inDoubtTimeout.toMillis() + " ms",
                        failure.getSQLState(),
                        failure);
            }
            try {
                Thread.sleep(IN_DOUBT_POLL);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SQLException("interrupted while asking whether " + name + " committed", failure);
            }
        }
    }

    /** A connection error, or the server ending the session (shutdown, crash, restart). */
    private static boolean lost(SQLException e) {
        String state = e.getSQLState();
        return state != null && (state.startsWith("08") || SESSION_ENDED.contains(state));
    }

    /** How a unit starts: a read does nothing; a write learns its transaction id ({@link #transactionId}). */
    private enum Unit {
        READ(null),
        WRITE("SELECT pg_current_xact_id()::text"),
        WRITE_ASYNC("SELECT pg_current_xact_id()::text, set_config('synchronous_commit', 'off', true)");

        private final String begin;

        Unit(String begin) {
            this.begin = begin;
        }
    }

    /** How one run of a unit ended. */
    private sealed interface Attempt<T> {
        /** Committed (a write) or ended (a read). */
        record Done<T>(T value) implements Attempt<T> {}

        /** The connection was lost before the commit was sent: nothing was kept, the unit may run again. */
        record Lost<T>(SQLException cause) implements Attempt<T> {}

        /** The connection was lost while the unit's transaction committed: whether it did is unknown here. */
        record InDoubt<T>(T value, String transaction, SQLException cause) implements Attempt<T> {}
    }

    /** Closes the pool; calls after this fail with {@link StoreException}. */
    @Override
    public void close() {
        pool.close();
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
