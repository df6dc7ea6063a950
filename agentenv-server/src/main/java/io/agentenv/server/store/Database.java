package io.agentenv.server.store;

import io.agentenv.server.orchestrator.SandboxStore;
import io.agentenv.server.orchestrator.StoreException;
import org.sqlite.SQLiteConfig;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.locks.ReentrantLock;

import static java.util.Objects.requireNonNull;

/**
 * One SQLite connection (WAL, {@code synchronous=FULL}, foreign keys) used by one thread at a time; every unit of work
 * is one short transaction, committed (and so fsynced) before it returns. The lock guards only the connection. An
 * exclusive lock on {@code <file>.lock} keeps a second server from using the same store (its restart recovery would
 * reconcile the first one's sandboxes away).
 */
final class Database implements AutoCloseable {
    private final Connection connection;
    private final FileChannel lockFile;
    private final ReentrantLock lock = new ReentrantLock();
    private boolean closed;

    @FunctionalInterface
    interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    private Database(Connection connection, FileChannel lockFile) {
        this.connection = connection;
        this.lockFile = lockFile;
    }

    /** Opens (creating if needed) the database at {@code file} and applies pending schema migrations. */
    static Database open(Path file) {
        requireNonNull(file, "file is null");
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            FileChannel lockFile = FileChannel.open(Path.of(file.toAbsolutePath() + ".lock"),
                    StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            try {
                if (lockFile.tryLock() == null) {
                    throw new StoreException("the sandbox store at " + file + " is in use by another server", null);
                }
                return new Database(connect(file), lockFile);
            } catch (SQLException | IOException | RuntimeException e) {
                lockFile.close(); // releases the lock
                throw e;
            }
        } catch (OverlappingFileLockException e) {
            throw new StoreException("the sandbox store at " + file + " is already open in this process", e);
        } catch (SQLException | IOException e) {
            throw new StoreException("cannot open the sandbox store at " + file, e);
        }
    }

    private static Connection connect(Path file) throws SQLException {
        SQLiteConfig config = new SQLiteConfig();
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        config.setSynchronous(SQLiteConfig.SynchronousMode.FULL);
        config.enforceForeignKeys(true);
        config.setBusyTimeout(10_000);
        Connection connection = config.createConnection("jdbc:sqlite:" + file.toAbsolutePath());
        try {
            migrate(connection);
            connection.setAutoCommit(false);
        } catch (SQLException | RuntimeException e) {
            connection.close();
            throw e;
        }
        return connection;
    }

    private static void migrate(Connection connection) throws SQLException {
        int current;
        try (Statement st = connection.createStatement(); ResultSet rs = st.executeQuery("PRAGMA user_version")) {
            current = rs.next() ? rs.getInt(1) : 0;
        }
        if (current > Schema.MIGRATIONS.size()) {
            throw new SQLException("store schema version " + current + " is newer than this server ("
                    + Schema.MIGRATIONS.size() + ")");
        }
        connection.setAutoCommit(false);
        try (Statement st = connection.createStatement()) {
            for (int version = current + 1; version <= Schema.MIGRATIONS.size(); version++) {
                for (String sql : Schema.MIGRATIONS.get(version - 1)) {
                    st.executeUpdate(sql);
                }
                st.executeUpdate("PRAGMA user_version = " + version);
            }
            connection.commit();
        } catch (SQLException e) {
            connection.rollback();
            throw e;
        } finally {
            connection.setAutoCommit(true);
        }
    }

    <T> T write(String what, Work<T> work) {
        return write(what, SandboxStore.Durability.NOW, work);
    }

    /**
     * One transaction. {@link SandboxStore.Durability#WITH_NEXT_WRITE} commits it with {@code synchronous=OFF} (no
     * fsync: the WAL frames reach the disk with the next commit's fsync, which covers all earlier frames) and sets
     * {@code FULL} again before the lock is released; if that fails the store closes itself rather than go on with
     * writes that are not durable.
     */
    <T> T write(String what, SandboxStore.Durability durability, Work<T> work) {
        lock.lock();
        try {
            checkOpen();
            boolean deferred = durability == SandboxStore.Durability.WITH_NEXT_WRITE;
            if (deferred) {
                synchronous("OFF");
            }
            try {
                T result = work.run(connection);
                connection.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                rollbackQuietly(e);
                throw e;
            } finally {
                if (deferred) {
                    restoreFullSync(what);
                }
            }
        } catch (SQLException e) {
            throw new StoreException("store failed to " + what, e);
        } finally {
            lock.unlock();
        }
    }

    /** SQLite refuses to change the safety level inside a transaction, and the driver keeps one open between writes. */
    private void synchronous(String level) throws SQLException {
        connection.setAutoCommit(true); // ends the driver's open (empty) transaction
        try (Statement st = connection.createStatement()) {
            st.executeUpdate("PRAGMA synchronous = " + level);
        } finally {
            connection.setAutoCommit(false);
        }
    }

    private void restoreFullSync(String what) {
        try {
            synchronous("FULL");
        } catch (SQLException | RuntimeException e) {
            closed = true;
            try {
                connection.close();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new StoreException("the sandbox store could not make its writes durable again after it was asked to "
                    + what + "; it is closed", e);
        }
    }

    /** {@code PRAGMA synchronous} as SQLite reports it (2 is FULL). */
    int synchronousLevel() {
        return read("read the safety level", c -> {
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("PRAGMA synchronous")) {
                return rs.next() ? rs.getInt(1) : -1;
            }
        });
    }

    <T> T read(String what, Work<T> work) {
        lock.lock();
        try {
            checkOpen();
            try {
                return work.run(connection);
            } finally {
                connection.rollback(); // ends the read transaction
            }
        } catch (SQLException e) {
            throw new StoreException("store failed to " + what, e);
        } finally {
            lock.unlock();
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new StoreException("the sandbox store is closed", null);
        }
    }

    private void rollbackQuietly(Exception failure) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            try {
                connection.close();
            } finally {
                lockFile.close();
            }
        } catch (SQLException | IOException e) {
            throw new StoreException("cannot close the sandbox store", e);
        } finally {
            lock.unlock();
        }
    }
}
