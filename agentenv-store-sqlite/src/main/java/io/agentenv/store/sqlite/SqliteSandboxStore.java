package io.agentenv.store.sqlite;

import static java.util.Objects.requireNonNull;

import io.agentenv.orchestrator.SandboxRecord;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.TemplateBuildStore;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.SandboxId;
import io.agentenv.store.jdbc.Codec;
import io.agentenv.store.jdbc.JdbcSandboxStore;
import io.agentenv.store.jdbc.Rows;
import io.agentenv.volumes.VolumeStore;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@link SandboxStore} on one SQLite file: WAL journal with {@code synchronous=FULL}, so a committed change has been
 * fsynced before a method returns. One connection, used by one thread at a time; every method is one short
 * transaction. The lock guards only this connection (the orchestrator never calls the store while holding its own
 * locks across backend I/O). Fixed statements are compiled once per connection ({@link Statements}); a replace
 * rewrites the metadata index rows only when the metadata changed.
 */
public final class SqliteSandboxStore extends JdbcSandboxStore {
    private static final String COLUMNS = Rows.COLUMNS;

    private final Database db;
    private final SqliteTemplateBuildStore templateBuilds;
    private final SqliteVolumeStore volumes;

    private SqliteSandboxStore(Database db) {
        super(db);
        this.db = db;
        this.templateBuilds = new SqliteTemplateBuildStore(db);
        this.volumes = new SqliteVolumeStore(db);
    }

    /** Volume records, in the same database. */
    public VolumeStore volumes() {
        return volumes;
    }

    /** Templates requested through the build API, their builds and logs, in the same database. */
    public TemplateBuildStore templateBuilds() {
        return templateBuilds;
    }

    /** Opens (creating if needed) the database at {@code file} and applies pending schema migrations. */
    public static SqliteSandboxStore open(Path file) {
        return new SqliteSandboxStore(Database.open(file));
    }

    /** {@code PRAGMA synchronous} of the connection (2 is FULL; for tests). */
    int synchronousLevel() {
        return db.synchronousLevel();
    }

    /** Statements compiled so far through the connection's cache (tests and benchmarks: the cache is used). */
    long compiledStatements() {
        return db.compiledStatements();
    }

    /** Statements run through the cache so far (tests and benchmarks: statements per operation). */
    long statementUses() {
        return db.statementUses();
    }

    /** Write transactions committed so far (tests and benchmarks: transactions per operation). */
    long transactions() {
        return db.commits();
    }

    /** The schema version this code writes; {@code PRAGMA user_version} of an up-to-date file. */
    public static int schemaVersion() {
        return Schema.MIGRATIONS.size();
    }

    // ---- sandboxes ---------------------------------------------------------------------------------------------

    private static final String INSERT =
            "INSERT INTO sandbox (" + COLUMNS + ") VALUES (" + Rows.placeholders(Rows.COLUMN_COUNT) + ")";
    private static final String STORED_METADATA = "SELECT metadata FROM sandbox WHERE id = ?";
    private static final String DELETE_METADATA = "DELETE FROM sandbox_metadata WHERE sandbox_id = ?";
    private static final String ALL = "SELECT " + COLUMNS + " FROM sandbox ORDER BY started_at, id";
    private static final String LIST_EXPIRED = "SELECT id FROM sandbox WHERE state = 'RUNNING' "
            + "AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at, id";
    private static final String IDS_IN = "SELECT id FROM sandbox WHERE state = ?";
    private static final String MOUNTING = "SELECT DISTINCT sandbox.id FROM sandbox, json_each(sandbox.volumes) AS v "
            + "WHERE sandbox.volumes <> '[]' AND json_extract(v.value, '$.volumeId') = ?";
    // the conditional writes, by the number of states they accept (index: that number)
    private static final String[] TRANSITION =
            Rows.byStateCount("UPDATE sandbox SET state = ?, version = version + 1 WHERE id = ? AND state IN (", ")");
    private static final String[] REPLACE = Rows.byStateCount(
            "UPDATE sandbox SET " + String.join(" = ?, ", COLUMNS.split(", "))
                    + " = ?, version = version + 1 WHERE id = ? AND state IN (",
            ")");
    private static final String[] UPDATE_TTL = Rows.byStateCount(
            "UPDATE sandbox SET timeout_ms = ?, expires_at = ?, version = version + 1 WHERE id = ? AND state IN (",
            ")");
    private static final String[] UPDATE_NETWORK =
            Rows.byStateCount("UPDATE sandbox SET network = ?, version = version + 1 WHERE id = ? AND state IN (", ")");
    private static final String[] UPDATE_PARAMS = Rows.byStateCount(
            "UPDATE sandbox SET custom_extension_params = ?, " + "version = version + 1 WHERE id = ? AND state IN (",
            ")");
    private static final String[] DELETE = Rows.byStateCount("DELETE FROM sandbox WHERE id = ? AND state IN (", ")");

    @Override
    public void insert(SandboxRecord record, Durability durability) {
        requireNonNull(record, "record is null");
        requireNonNull(durability, "durability is null");
        db.write("insert", record.id(), durability, s -> {
            PreparedStatement st = s.prepared(INSERT);
            Rows.bindRecord(st, record, Codec.map(record.metadata()));
            st.executeUpdate();
            Rows.writeMetadata(s, record);
            return null;
        });
    }

    @Override
    public boolean transition(SandboxId id, Set<SandboxState> from, SandboxState to) {
        requireNonNull(id, "id is null");
        requireNonNull(to, "to is null");
        if (from.isEmpty()) {
            return false;
        }
        return db.write("transition", id, Durability.NOW, s -> {
            PreparedStatement st = s.prepared(TRANSITION[from.size()]);
            st.setString(1, to.name());
            st.setString(2, id.value());
            Rows.bindStates(st, 3, from);
            return st.executeUpdate() == 1;
        });
    }

    /**
     * One UPDATE of the record's columns; the metadata index rows are rewritten only when the metadata changed (a
     * create's CREATING to RUNNING replace keeps them: read back the stored metadata column and compare its encoding).
     */
    @Override
    public boolean replace(SandboxRecord record, Set<SandboxState> expected) {
        requireNonNull(record, "record is null");
        if (expected.isEmpty()) {
            return false;
        }
        String metadata = Codec.map(record.metadata());
        return db.write("replace", record.id(), Durability.NOW, s -> {
            String stored;
            PreparedStatement read = s.prepared(STORED_METADATA);
            read.setString(1, record.id().value());
            try (ResultSet rs = read.executeQuery()) {
                if (!rs.next()) {
                    return false;
                }
                stored = rs.getString(1);
            }
            PreparedStatement st = s.prepared(REPLACE[expected.size()]);
            int next = Rows.bindRecord(st, record, metadata);
            st.setString(next++, record.id().value());
            Rows.bindStates(st, next, expected);
            if (st.executeUpdate() != 1) {
                return false;
            }
            if (!metadata.equals(stored)) {
                PreparedStatement clear = s.prepared(DELETE_METADATA);
                clear.setString(1, record.id().value());
                clear.executeUpdate();
                Rows.writeMetadata(s, record);
            }
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
        return db.write("update the TTL of", id, Durability.NOW, s -> {
            PreparedStatement st = s.prepared(UPDATE_TTL[expected.size()]);
            st.setLong(1, timeout.toMillis());
            if (expiresAt.isPresent()) {
                st.setLong(2, Codec.nanos(expiresAt.get()));
            } else {
                st.setNull(2, Types.INTEGER);
            }
            st.setString(3, id.value());
            Rows.bindStates(st, 4, expected);
            return st.executeUpdate() == 1;
        });
    }

    @Override
    public boolean updateNetwork(SandboxId id, Set<SandboxState> expected, NetworkPolicy network) {
        requireNonNull(id, "id is null");
        requireNonNull(network, "network is null");
        if (expected.isEmpty()) {
            return false;
        }
        return db.write("update the network of", id, Durability.NOW, s -> {
            PreparedStatement st = s.prepared(UPDATE_NETWORK[expected.size()]);
            st.setString(1, Codec.network(network));
            st.setString(2, id.value());
            Rows.bindStates(st, 3, expected);
            return st.executeUpdate() == 1;
        });
    }

    @Override
    public boolean updateCustomExtensionParams(SandboxId id, Set<SandboxState> expected, String customExtensionParams) {
        requireNonNull(id, "id is null");
        requireNonNull(customExtensionParams, "customExtensionParams is null");
        if (expected.isEmpty()) {
            return false;
        }
        return db.write("update the custom extension params of", id, Durability.NOW, s -> {
            PreparedStatement st = s.prepared(UPDATE_PARAMS[expected.size()]);
            st.setString(1, customExtensionParams);
            st.setString(2, id.value());
            Rows.bindStates(st, 3, expected);
            return st.executeUpdate() == 1;
        });
    }

    @Override
    public boolean delete(SandboxId id, Set<SandboxState> expected) {
        requireNonNull(id, "id is null");
        if (expected.isEmpty()) {
            return false;
        }
        return db.write("delete", id, Durability.NOW, s -> {
            PreparedStatement st = s.prepared(DELETE[expected.size()]);
            st.setString(1, id.value());
            Rows.bindStates(st, 2, expected);
            return st.executeUpdate() == 1;
        });
    }

    @Override
    public List<SandboxId> listExpired(Instant now) {
        requireNonNull(now, "now is null");
        return db.read("list expired", s -> {
            PreparedStatement st = s.prepared(LIST_EXPIRED);
            st.setLong(1, Codec.nanos(now));
            return ids(st);
        });
    }

    @Override
    public Set<SandboxId> idsIn(SandboxState state) {
        requireNonNull(state, "state is null");
        return db.read("ids in state", s -> {
            PreparedStatement st = s.prepared(IDS_IN);
            st.setString(1, state.name());
            return Set.copyOf(ids(st));
        });
    }

    @Override
    public Set<SandboxId> mounting(String volumeId) {
        requireNonNull(volumeId, "volumeId is null");
        return db.read("sandboxes mounting a volume", s -> {
            PreparedStatement st = s.prepared(MOUNTING);
            st.setString(1, volumeId);
            return Set.copyOf(ids(st));
        });
    }

    @Override
    public List<SandboxRecord> all() {
        return db.read("list all sandboxes", s -> records(s.prepared(ALL)));
    }

    @Override
    public void close() {
        db.close();
    }
}
