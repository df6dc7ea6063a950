package io.agentenv.store.sqlite;

import static java.util.Objects.requireNonNull;

import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.StoreException;
import io.agentenv.store.jdbc.Cleanup;
import io.agentenv.store.jdbc.Transactions;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.sqlite.SQLiteConfig;

/**
 * One SQLite connection (WAL, {@code synchronous=FULL}, foreign keys) used by one thread at a time; every unit of work
 * is committed (and so fsynced) before it returns, by the store's writer thread, concurrent writers' units in one
 * shared transaction (group commit, {@link #write(String, Object, SandboxStore.Durability, Work)}). A unit of work
 * gets the connection's {@link Statements}, which keeps its fixed statements compiled. The lock guards only the
 * connection and its statements. An exclusive lock on {@code <file>.lock} keeps a second server from using the same
 * store (its restart recovery would reconcile the first one's sandboxes away).
 */
final class Database implements Transactions, AutoCloseable {
    private final Connection connection;
    private final Statements statements;
    private final FileChannel lockFile;
    private final ReentrantLock lock = new ReentrantLock();
    private final Queue<QueuedWrite<?>> queued = new ConcurrentLinkedQueue<>();
    private final AtomicLong commits = new AtomicLong();
    private final AtomicBoolean draining = new AtomicBoolean();
    private final ExecutorService writer = Executors.newSingleThreadExecutor(
            Thread.ofPlatform().name("aenv-store-writer").daemon().factory());
    private boolean closed;

    private Database(Connection connection, FileChannel lockFile) {
        this.connection = connection;
        this.statements = new Statements(connection);
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
            FileChannel lockFile = FileChannel.open(
                    Path.of(file.toAbsolutePath() + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
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
        try (Statement st = connection.createStatement();
                ResultSet rs = st.executeQuery("PRAGMA user_version")) {
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

    /**
     * One unit of work, committed before this returns. Units are queued and committed by the store's own writer thread
     * (a platform thread: SQLite's fsync in a native call would otherwise pin a virtual thread's carrier, one of the
     * few that run every request), every unit queued when it gets to them in one transaction (group commit: one fsync
     * for all instead of one each, so a burst of creates does not line up behind one fsync per write, nor hand a lock
     * from one waiting create to the next). Each unit runs inside a savepoint of its own: a unit that fails is rolled
     * back alone and its caller gets its failure, the others are committed. The transaction is made durable at once
     * ({@code synchronous=FULL}) when any unit asks for {@link SandboxStore.Durability#NOW}; when all ask for
     * {@link SandboxStore.Durability#WITH_NEXT_WRITE} it is committed with {@code synchronous=OFF} (no fsync: the WAL
     * frames reach the disk with the next commit's fsync, which covers all earlier frames) and {@code FULL} is set
     * again before the connection is released; if that fails the store closes itself rather than go on with writes
     * that are not durable. The caller waits for its unit without a time limit and without giving up on an interrupt
     * (the interrupt is kept): its unit is committed or failed either way. {@code what} and {@code subject} (null, or
     * what it is done to, e.g. a sandbox id) name the unit in messages, which are built only when needed.
     */
    @Override
    public <T> T write(String what, Object subject, SandboxStore.Durability durability, Work<T> work) {
        requireNonNull(durability, "durability is null");
        requireNonNull(work, "work is null");
        if (lock.isHeldByCurrentThread()) {
            throw new IllegalStateException("a store write cannot start inside another store call ("
                    + Transactions.describe(what, subject) + ")");
        }
        QueuedWrite<T> mine = new QueuedWrite<>(what, subject, durability, work);
        queued.add(mine);
        scheduleDrain();
        return mine.result();
    }

    /** Makes sure the writer thread will commit what is queued now (at most one drain is scheduled or running). */
    private void scheduleDrain() {
        if (!draining.compareAndSet(false, true)) {
            return; // the running drain looks at the queue again after it lets go of the flag
        }
        try {
            writer.execute(this::drain);
        } catch (RejectedExecutionException e) { // closed
            draining.set(false);
            failQueued();
        }
    }

    /** On the writer thread: commits until the queue is empty, then once more if something came in meanwhile. */
    private void drain() {
        do {
            lock.lock();
            try {
                while (!queued.isEmpty()) {
                    commitQueued();
                }
            } finally {
                lock.unlock();
                draining.set(false);
            }
        } while (!queued.isEmpty() && draining.compareAndSet(false, true));
    }

    /** Fails every queued unit: the store is closed. */
    private void failQueued() {
        StoreException closed = new StoreException("the sandbox store is closed", null);
        for (QueuedWrite<?> unit; (unit = queued.poll()) != null; ) {
            unit.finish(closed);
        }
    }

    /** How many transactions the writes committed so far (tests: group commit). */
    long commits() {
        return commits.get();
    }

    /** Statements compiled on the connection so far through its cache (tests and benchmarks). */
    long compiledStatements() {
        lock.lock();
        try {
            return statements.compiled();
        } finally {
            lock.unlock();
        }
    }

    /** Statements run through the cache so far (tests and benchmarks: statements per operation). */
    long statementUses() {
        lock.lock();
        try {
            return statements.uses();
        } finally {
            lock.unlock();
        }
    }

    /** Units waiting for the connection right now (tests: group commit). */
    int queuedWrites() {
        return queued.size();
    }

    /** Commits every queued unit in one transaction; runs on the writer thread with the lock held. */
    private void commitQueued() {
        List<QueuedWrite<?>> batch = new ArrayList<>();
        for (QueuedWrite<?> unit; (unit = queued.poll()) != null; ) {
            batch.add(unit);
        }
        if (batch.isEmpty()) {
            return;
        }
        boolean deferred = batch.stream().allMatch(u -> u.durability() == SandboxStore.Durability.WITH_NEXT_WRITE);
        Throwable failure = null;
        try {
            checkOpen();
            if (deferred) {
                synchronous("OFF");
            }
            try {
                runAll(batch);
                connection.commit();
                commits.incrementAndGet();
            } catch (Throwable e) { // every caller of the batch gets it; none may wait forever
                Cleanup.rollbackQuietly(connection, e);
                failure = e;
            } finally {
                if (deferred) {
                    restoreFullSync(batch.getFirst().what()); // closes the store and throws if it cannot
                }
            }
        } catch (Throwable e) {
            failure = e;
        }
        for (QueuedWrite<?> unit : batch) {
            unit.finish(failure);
        }
    }

    /**
     * Runs each unit in the transaction. With more than one, each runs inside a savepoint: a unit that fails is rolled
     * back to it and keeps its failure while the others go on; a failure that leaves the transaction unusable (the
     * rollback to the savepoint fails) is thrown and fails the whole batch.
     */
    private void runAll(List<QueuedWrite<?>> batch) throws SQLException {
        if (batch.size() == 1) {
            batch.getFirst().run(statements); // its failure fails the (one-unit) transaction, as before group commit
            return;
        }
        for (QueuedWrite<?> unit : batch) {
            Savepoint savepoint = connection.setSavepoint();
            try {
                unit.run(statements);
            } catch (Throwable e) {
                connection.rollback(savepoint);
                unit.keep(e);
            }
            connection.releaseSavepoint(savepoint);
        }
    }

    /**
     * SQLite refuses to change the safety level inside a transaction, and the driver keeps one open between writes. The
     * two levels' statements are compiled once (a burst's deferred inserts switch twice per transaction).
     */
    private void synchronous(String level) throws SQLException {
        connection.setAutoCommit(true); // ends the driver's open (empty) transaction
        try {
            statements.prepared("PRAGMA synchronous = " + level).executeUpdate();
        } finally {
            connection.setAutoCommit(false);
        }
    }

    private void restoreFullSync(String what) {
        try {
            synchronous("FULL");
        } catch (SQLException | RuntimeException e) {
            closed = true;
            try (connection;
                    statements) {
                // closes the kept statements, then the connection
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new StoreException(
                    "the sandbox store could not make its writes durable again after it was asked to " + what
                            + "; it is closed",
                    e);
        }
    }

    /** {@code PRAGMA synchronous} as SQLite reports it (2 is FULL). */
    int synchronousLevel() {
        return read("read the safety level", s -> {
            try (ResultSet rs = s.prepared("PRAGMA synchronous").executeQuery()) {
                return rs.next() ? rs.getInt(1) : -1;
            }
        });
    }

    @Override
    public <T> T read(String what, Object subject, Work<T> work) {
        lock.lock();
        try {
            checkOpen();
            try {
                return work.run(statements);
            } finally {
                connection.rollback(); // ends the read transaction
            }
        } catch (SQLException e) {
            throw new StoreException("store failed to " + Transactions.describe(what, subject), e);
        } finally {
            lock.unlock();
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new StoreException("the sandbox store is closed", null);
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
            try (lockFile;
                    connection;
                    statements) {
                // closes the kept statements, the connection, then the lock file (releasing the lock)
            }
        } catch (SQLException | IOException e) {
            throw new StoreException("cannot close the sandbox store", e);
        } finally {
            lock.unlock();
            writer.shutdown(); // a drain already scheduled still runs and fails what it finds (the store is closed)
        }
    }
}
