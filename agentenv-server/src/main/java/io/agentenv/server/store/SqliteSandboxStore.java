package io.agentenv.server.store;

import io.agentenv.server.orchestrator.Cursor;
import io.agentenv.server.orchestrator.Page;
import io.agentenv.server.orchestrator.SandboxQuery;
import io.agentenv.server.orchestrator.SandboxRecord;
import io.agentenv.server.orchestrator.SandboxState;
import io.agentenv.server.orchestrator.SandboxStore;
import io.agentenv.server.orchestrator.SnapshotQuery;
import io.agentenv.server.orchestrator.SnapshotRecord;
import io.agentenv.server.orchestrator.SortOrder;
import io.agentenv.server.orchestrator.StoreException;
import io.agentenv.server.orchestrator.StoredState;
import io.agentenv.server.orchestrator.TimeoutAction;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import org.sqlite.SQLiteConfig;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

import static java.util.Objects.requireNonNull;

/**
 * {@link SandboxStore} on one SQLite file: WAL journal with {@code synchronous=FULL}, so a committed change has been
 * fsynced before a method returns. One connection, used by one thread at a time; every method is one short
 * transaction. The lock guards only this connection (the orchestrator never calls the store while holding its own
 * locks across backend I/O).
 */
public final class SqliteSandboxStore implements SandboxStore {
    private static final String TOKEN_SEED = "token_seed";
    private static final String COLUMNS = "id, template, alias, state, started_at, timeout_ms, expires_at, on_timeout, "
            + "timeout_pause_mode, auto_resume, secure, cpu_count, memory_mib, disk_size_mib, metadata, env_vars, network, "
            + "custom_extension_params, paused_state, paused_artifact_dir";

    private final Connection connection;
    private final ReentrantLock lock = new ReentrantLock();
    private boolean closed;

    private SqliteSandboxStore(Connection connection) {
        this.connection = connection;
    }

    /** Opens (creating if needed) the database at {@code file} and applies pending schema migrations. */
    public static SqliteSandboxStore open(Path file) {
        requireNonNull(file, "file is null");
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
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
            return new SqliteSandboxStore(connection);
        } catch (SQLException | java.io.IOException e) {
            throw new StoreException("cannot open the sandbox store at " + file, e);
        }
    }

    /** The schema version this code writes; {@code PRAGMA user_version} of an up-to-date file. */
    public static int schemaVersion() {
        return Schema.MIGRATIONS.size();
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

    // ---- sandboxes ---------------------------------------------------------------------------------------------

    @Override
    public void insert(SandboxRecord record) {
        requireNonNull(record, "record is null");
        write("insert " + record.id(), c -> {
            try (PreparedStatement st = c.prepareStatement("INSERT INTO sandbox (" + COLUMNS + ") VALUES ("
                    + String.join(", ", Collections.nCopies(20, "?")) + ")")) {
                bindRecord(st, record);
                st.executeUpdate();
            }
            writeMetadata(c, record);
            return null;
        });
    }

    @Override
    public Optional<SandboxRecord> get(SandboxId id) {
        requireNonNull(id, "id is null");
        return read("get " + id, c -> {
            try (PreparedStatement st = c.prepareStatement("SELECT " + COLUMNS + " FROM sandbox WHERE id = ?")) {
                st.setString(1, id.value());
                try (ResultSet rs = st.executeQuery()) {
                    return rs.next() ? Optional.of(toRecord(rs)) : Optional.<SandboxRecord>empty();
                }
            }
        });
    }

    @Override
    public boolean transition(SandboxId id, Set<SandboxState> from, SandboxState to) {
        requireNonNull(id, "id is null");
        requireNonNull(to, "to is null");
        if (from.isEmpty()) {
            return false;
        }
        return write("transition " + id + " to " + to, c -> {
            try (PreparedStatement st = c.prepareStatement("UPDATE sandbox SET state = ?, version = version + 1 "
                    + "WHERE id = ? AND state IN (" + placeholders(from.size()) + ")")) {
                st.setString(1, to.name());
                st.setString(2, id.value());
                bindStates(st, 3, from);
                return st.executeUpdate() == 1;
            }
        });
    }

    @Override
    public boolean replace(SandboxRecord record, Set<SandboxState> expected) {
        requireNonNull(record, "record is null");
        if (expected.isEmpty()) {
            return false;
        }
        return write("replace " + record.id(), c -> {
            String assignments = String.join(" = ?, ", COLUMNS.split(", ")) + " = ?";
            try (PreparedStatement st = c.prepareStatement("UPDATE sandbox SET " + assignments
                    + ", version = version + 1 WHERE id = ? AND state IN (" + placeholders(expected.size()) + ")")) {
                int next = bindRecord(st, record);
                st.setString(next++, record.id().value());
                bindStates(st, next, expected);
                if (st.executeUpdate() != 1) {
                    return false;
                }
            }
            try (PreparedStatement st = c.prepareStatement("DELETE FROM sandbox_metadata WHERE sandbox_id = ?")) {
                st.setString(1, record.id().value());
                st.executeUpdate();
            }
            writeMetadata(c, record);
            return true;
        });
    }

    @Override
    public boolean updateTtl(SandboxId id, Set<SandboxState> expected, Duration timeout, Optional<Instant> expiresAt) {
        requireNonNull(id, "id is null");
        requireNonNull(timeout, "timeout is null");
        requireNonNull(expiresAt, "expiresAt is null");
        if (expected.isEmpty()) {
            return false;
        }
        return write("update the TTL of " + id, c -> {
            try (PreparedStatement st = c.prepareStatement("UPDATE sandbox SET timeout_ms = ?, expires_at = ?, "
                    + "version = version + 1 WHERE id = ? AND state IN (" + placeholders(expected.size()) + ")")) {
                st.setLong(1, timeout.toMillis());
                if (expiresAt.isPresent()) {
                    st.setLong(2, Codec.nanos(expiresAt.get()));
                } else {
                    st.setNull(2, Types.INTEGER);
                }
                st.setString(3, id.value());
                bindStates(st, 4, expected);
                return st.executeUpdate() == 1;
            }
        });
    }

    @Override
    public boolean updateNetwork(SandboxId id, Set<SandboxState> expected, NetworkPolicy network) {
        requireNonNull(id, "id is null");
        requireNonNull(network, "network is null");
        if (expected.isEmpty()) {
            return false;
        }
        return write("update the network of " + id, c -> {
            try (PreparedStatement st = c.prepareStatement("UPDATE sandbox SET network = ?, version = version + 1 "
                    + "WHERE id = ? AND state IN (" + placeholders(expected.size()) + ")")) {
                st.setString(1, Codec.network(network));
                st.setString(2, id.value());
                bindStates(st, 3, expected);
                return st.executeUpdate() == 1;
            }
        });
    }

    @Override
    public boolean delete(SandboxId id, Set<SandboxState> expected) {
        requireNonNull(id, "id is null");
        if (expected.isEmpty()) {
            return false;
        }
        return write("delete " + id, c -> {
            try (PreparedStatement st = c.prepareStatement(
                    "DELETE FROM sandbox WHERE id = ? AND state IN (" + placeholders(expected.size()) + ")")) {
                st.setString(1, id.value());
                bindStates(st, 2, expected);
                return st.executeUpdate() == 1;
            }
        });
    }

    @Override
    public List<SandboxId> listExpired(Instant now) {
        requireNonNull(now, "now is null");
        return read("list expired", c -> {
            try (PreparedStatement st = c.prepareStatement("SELECT id FROM sandbox WHERE state = 'RUNNING' "
                    + "AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at, id")) {
                st.setLong(1, Codec.nanos(now));
                List<SandboxId> ids = new ArrayList<>();
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        ids.add(new SandboxId(rs.getString(1)));
                    }
                }
                return ids;
            }
        });
    }

    @Override
    public Page<SandboxRecord> list(SandboxQuery query) {
        requireNonNull(query, "query is null");
        if (query.limit() == 0 || query.states().isEmpty()) {
            return new Page<>(List.of(), Optional.empty());
        }
        StringBuilder sql = new StringBuilder("SELECT " + COLUMNS + " FROM sandbox s WHERE state IN (")
                .append(placeholders(query.states().size())).append(')');
        List<Object> args = new ArrayList<>();
        query.states().stream().map(Enum::name).sorted().forEach(args::add);
        query.template().ifPresent(template -> {
            sql.append(" AND (template = ? OR alias = ?)");
            args.add(template);
            args.add(template);
        });
        query.startedAfter().ifPresent(after -> {
            sql.append(" AND started_at >= ?");
            args.add(Codec.nanos(after));
        });
        for (Map.Entry<String, String> pair : query.metadata().entrySet()) {
            sql.append(" AND EXISTS (SELECT 1 FROM sandbox_metadata m WHERE m.sandbox_id = s.id AND m.key = ? AND m.value = ?)");
            args.add(pair.getKey());
            args.add(pair.getValue());
        }
        boolean desc = query.order() == SortOrder.DESC;
        query.after().ifPresent(cursor -> {
            String cmp = desc ? "<" : ">";
            sql.append(" AND (started_at ").append(cmp).append(" ? OR (started_at = ? AND id ").append(cmp).append(" ?))");
            args.add(Codec.nanos(cursor.at()));
            args.add(Codec.nanos(cursor.at()));
            args.add(cursor.id());
        });
        String direction = desc ? " DESC" : " ASC";
        sql.append(" ORDER BY started_at").append(direction).append(", id").append(direction).append(" LIMIT ?");
        args.add(query.limit() + 1);
        List<SandboxRecord> rows = read("list sandboxes", c -> {
            try (PreparedStatement st = c.prepareStatement(sql.toString())) {
                bindAll(st, args);
                List<SandboxRecord> found = new ArrayList<>();
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        found.add(toRecord(rs));
                    }
                }
                return found;
            }
        });
        return page(rows, query.limit(), r -> new Cursor(r.startedAt(), r.id().value()));
    }

    @Override
    public List<SandboxRecord> all() {
        return read("list all sandboxes", c -> {
            try (PreparedStatement st = c.prepareStatement("SELECT " + COLUMNS + " FROM sandbox ORDER BY started_at, id");
                 ResultSet rs = st.executeQuery()) {
                List<SandboxRecord> found = new ArrayList<>();
                while (rs.next()) {
                    found.add(toRecord(rs));
                }
                return found;
            }
        });
    }

    // ---- snapshot catalog --------------------------------------------------------------------------------------

    @Override
    public void insertSnapshot(SnapshotRecord snapshot) {
        requireNonNull(snapshot, "snapshot is null");
        write("insert snapshot " + snapshot.id(), c -> {
            try (PreparedStatement st = c.prepareStatement("INSERT INTO snapshot (id, source_sandbox, source_template, "
                    + "env_vars, cpu_count, memory_mib, disk_size_mib, state, artifact_dir, created_at, updated_at) "
                    + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
                st.setString(1, snapshot.id().value());
                st.setString(2, snapshot.sourceSandbox().map(SandboxId::value).orElse(null));
                st.setString(3, snapshot.sourceTemplate().value());
                st.setString(4, Codec.map(snapshot.envVars()));
                st.setInt(5, snapshot.resources().cpuCount());
                st.setInt(6, snapshot.resources().memoryMiB());
                st.setInt(7, snapshot.resources().diskSizeMiB());
                st.setBytes(8, snapshot.state().encoded());
                st.setString(9, snapshot.state().artifactDir().toString());
                st.setLong(10, Codec.nanos(snapshot.createdAt()));
                st.setLong(11, Codec.nanos(snapshot.updatedAt()));
                st.executeUpdate();
            }
            try (PreparedStatement st = c.prepareStatement("INSERT INTO snapshot_alias (alias, snapshot_id) VALUES (?, ?) "
                    + "ON CONFLICT (alias) DO UPDATE SET snapshot_id = excluded.snapshot_id")) {
                for (String alias : snapshot.aliases()) {
                    st.setString(1, alias);
                    st.setString(2, snapshot.id().value());
                    st.executeUpdate();
                }
            }
            return null;
        });
    }

    @Override
    public Optional<SnapshotRecord> findSnapshot(String idOrAlias) {
        requireNonNull(idOrAlias, "idOrAlias is null");
        return read("find snapshot", c -> {
            try (PreparedStatement st = c.prepareStatement("SELECT * FROM snapshot WHERE id = ? "
                    + "UNION ALL SELECT s.* FROM snapshot s JOIN snapshot_alias a ON a.snapshot_id = s.id WHERE a.alias = ? "
                    + "LIMIT 1")) {
                st.setString(1, idOrAlias);
                st.setString(2, idOrAlias);
                try (ResultSet rs = st.executeQuery()) {
                    return rs.next() ? Optional.of(toSnapshot(c, rs)) : Optional.<SnapshotRecord>empty();
                }
            }
        });
    }

    @Override
    public Page<SnapshotRecord> listSnapshots(SnapshotQuery query) {
        requireNonNull(query, "query is null");
        if (query.limit() == 0) {
            return new Page<>(List.of(), Optional.empty());
        }
        StringBuilder sql = new StringBuilder("SELECT * FROM snapshot s WHERE 1 = 1");
        List<Object> args = new ArrayList<>();
        query.sandbox().ifPresent(sandbox -> {
            sql.append(" AND source_sandbox = ?");
            args.add(sandbox.value());
        });
        query.name().ifPresent(name -> {
            sql.append(" AND (id = ? OR EXISTS (SELECT 1 FROM snapshot_alias a WHERE a.snapshot_id = s.id AND a.alias = ?))");
            args.add(name);
            args.add(name);
        });
        query.after().ifPresent(cursor -> {
            sql.append(" AND (created_at < ? OR (created_at = ? AND id < ?))");
            args.add(Codec.nanos(cursor.at()));
            args.add(Codec.nanos(cursor.at()));
            args.add(cursor.id());
        });
        sql.append(" ORDER BY created_at DESC, id DESC LIMIT ?");
        args.add(query.limit() + 1);
        List<SnapshotRecord> rows = read("list snapshots", c -> {
            try (PreparedStatement st = c.prepareStatement(sql.toString())) {
                bindAll(st, args);
                List<SnapshotRecord> found = new ArrayList<>();
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        found.add(toSnapshot(c, rs));
                    }
                }
                return found;
            }
        });
        return page(rows, query.limit(), s -> new Cursor(s.createdAt(), s.id().value()));
    }

    @Override
    public boolean deleteSnapshot(TemplateId id) {
        requireNonNull(id, "id is null");
        return write("delete snapshot " + id, c -> {
            try (PreparedStatement st = c.prepareStatement("DELETE FROM snapshot WHERE id = ?")) {
                st.setString(1, id.value());
                return st.executeUpdate() == 1;
            }
        });
    }

    // ---- secrets -----------------------------------------------------------------------------------------------

    @Override
    public String tokenSeed() {
        return write("token seed", c -> {
            try (PreparedStatement st = c.prepareStatement("SELECT value FROM secret WHERE name = ?")) {
                st.setString(1, TOKEN_SEED);
                try (ResultSet rs = st.executeQuery()) {
                    if (rs.next()) {
                        return rs.getString(1);
                    }
                }
            }
            byte[] seed = new byte[32];
            new SecureRandom().nextBytes(seed);
            String hex = HexFormat.of().formatHex(seed);
            try (PreparedStatement st = c.prepareStatement("INSERT INTO secret (name, value) VALUES (?, ?)")) {
                st.setString(1, TOKEN_SEED);
                st.setString(2, hex);
                st.executeUpdate();
            }
            return hex;
        });
    }

    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            connection.close();
        } catch (SQLException e) {
            throw new StoreException("cannot close the sandbox store", e);
        } finally {
            lock.unlock();
        }
    }

    // ---- plumbing ----------------------------------------------------------------------------------------------

    @FunctionalInterface
    private interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    @FunctionalInterface
    private interface CursorOf<T> {
        Cursor of(T item);
    }

    private <T> T write(String what, Work<T> work) {
        lock.lock();
        try {
            checkOpen();
            try {
                T result = work.run(connection);
                connection.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                rollbackQuietly(e);
                throw e;
            }
        } catch (SQLException e) {
            throw new StoreException("store failed to " + what, e);
        } finally {
            lock.unlock();
        }
    }

    private <T> T read(String what, Work<T> work) {
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

    private static <T> Page<T> page(List<T> rows, int limit, CursorOf<T> cursorOf) {
        if (rows.size() <= limit) {
            return new Page<>(rows, Optional.empty());
        }
        List<T> items = rows.subList(0, limit);
        return new Page<>(items, Optional.of(cursorOf.of(items.getLast())));
    }

    private static String placeholders(int count) {
        return String.join(", ", Collections.nCopies(count, "?"));
    }

    private static void bindStates(PreparedStatement st, int first, Set<SandboxState> states) throws SQLException {
        int i = first;
        for (SandboxState state : states) {
            st.setString(i++, state.name());
        }
    }

    private static void bindAll(PreparedStatement st, List<Object> args) throws SQLException {
        for (int i = 0; i < args.size(); i++) {
            switch (args.get(i)) {
                case String s -> st.setString(i + 1, s);
                case Long l -> st.setLong(i + 1, l);
                case Integer n -> st.setInt(i + 1, n);
                default -> throw new IllegalArgumentException("unsupported bind type " + args.get(i).getClass());
            }
        }
    }

    /** Binds the 20 columns of {@link #COLUMNS} from index 1; returns the next free index. */
    private static int bindRecord(PreparedStatement st, SandboxRecord r) throws SQLException {
        st.setString(1, r.id().value());
        st.setString(2, r.template().value());
        st.setString(3, r.alias().orElse(null));
        st.setString(4, r.state().name());
        st.setLong(5, Codec.nanos(r.startedAt()));
        st.setLong(6, r.timeout().toMillis());
        if (r.expiresAt().isPresent()) {
            st.setLong(7, Codec.nanos(r.expiresAt().get()));
        } else {
            st.setNull(7, Types.INTEGER);
        }
        st.setString(8, r.onTimeout().name());
        st.setString(9, r.timeoutPauseMode().name());
        st.setInt(10, r.autoResume() ? 1 : 0);
        st.setInt(11, r.secure() ? 1 : 0);
        st.setInt(12, r.resources().cpuCount());
        st.setInt(13, r.resources().memoryMiB());
        st.setInt(14, r.resources().diskSizeMiB());
        st.setString(15, Codec.map(r.metadata()));
        st.setString(16, Codec.map(r.envVars()));
        st.setString(17, Codec.network(r.network()));
        st.setString(18, r.customExtensionParams());
        if (r.paused().isPresent()) {
            st.setBytes(19, r.paused().get().encoded());
            st.setString(20, r.paused().get().artifactDir().toString());
        } else {
            st.setNull(19, Types.BLOB);
            st.setNull(20, Types.VARCHAR);
        }
        return 21;
    }

    private static void writeMetadata(Connection c, SandboxRecord record) throws SQLException {
        try (PreparedStatement st = c.prepareStatement(
                "INSERT INTO sandbox_metadata (sandbox_id, key, value) VALUES (?, ?, ?)")) {
            for (Map.Entry<String, String> pair : record.metadata().entrySet()) {
                st.setString(1, record.id().value());
                st.setString(2, pair.getKey());
                st.setString(3, pair.getValue());
                st.executeUpdate();
            }
        }
    }

    private static SandboxRecord toRecord(ResultSet rs) throws SQLException {
        long expires = rs.getLong("expires_at");
        Optional<Instant> expiresAt = rs.wasNull() ? Optional.empty() : Optional.of(Codec.instant(expires));
        byte[] pausedState = rs.getBytes("paused_state");
        String pausedDir = rs.getString("paused_artifact_dir");
        Optional<StoredState> paused = pausedState == null || pausedDir == null
                ? Optional.empty() : Optional.of(new StoredState(pausedState, Path.of(pausedDir)));
        return new SandboxRecord(
                new SandboxId(rs.getString("id")),
                new TemplateId(rs.getString("template")),
                Optional.ofNullable(rs.getString("alias")),
                SandboxState.valueOf(rs.getString("state")),
                Codec.instant(rs.getLong("started_at")),
                Duration.ofMillis(rs.getLong("timeout_ms")),
                expiresAt,
                TimeoutAction.valueOf(rs.getString("on_timeout")),
                PauseMode.valueOf(rs.getString("timeout_pause_mode")),
                rs.getInt("auto_resume") != 0,
                rs.getInt("secure") != 0,
                new Resources(rs.getInt("cpu_count"), rs.getInt("memory_mib"), rs.getInt("disk_size_mib")),
                Codec.map(rs.getString("metadata")),
                Codec.map(rs.getString("env_vars")),
                Codec.network(rs.getString("network")),
                rs.getString("custom_extension_params"),
                paused);
    }

    private static SnapshotRecord toSnapshot(Connection c, ResultSet rs) throws SQLException {
        String id = rs.getString("id");
        List<String> aliases = new ArrayList<>();
        try (PreparedStatement st = c.prepareStatement(
                "SELECT alias FROM snapshot_alias WHERE snapshot_id = ? ORDER BY alias")) {
            st.setString(1, id);
            try (ResultSet names = st.executeQuery()) {
                while (names.next()) {
                    aliases.add(names.getString(1));
                }
            }
        }
        return new SnapshotRecord(
                new TemplateId(id),
                aliases,
                Optional.ofNullable(rs.getString("source_sandbox")).map(SandboxId::new),
                new TemplateId(rs.getString("source_template")),
                Codec.map(rs.getString("env_vars")),
                new Resources(rs.getInt("cpu_count"), rs.getInt("memory_mib"), rs.getInt("disk_size_mib")),
                new StoredState(rs.getBytes("state"), Path.of(rs.getString("artifact_dir"))),
                Codec.instant(rs.getLong("created_at")),
                Codec.instant(rs.getLong("updated_at")));
    }
}
