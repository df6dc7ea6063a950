package io.agentenv.store.sqlite;

import static java.util.Objects.requireNonNull;

import io.agentenv.orchestrator.SandboxRecord;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.TemplateBuildStore;
import io.agentenv.spi.SandboxId;
import io.agentenv.store.jdbc.Codec;
import io.agentenv.store.jdbc.JdbcSandboxStore;
import io.agentenv.store.jdbc.PreparedStatements;
import io.agentenv.store.jdbc.Rows;
import io.agentenv.volumes.VolumeStore;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@link SandboxStore} on one SQLite file: WAL journal with {@code synchronous=FULL}, so a committed change has been
 * fsynced before a method returns. One connection, used by one thread at a time; every method is one short
 * transaction. The lock guards only this connection (the orchestrator never calls the store while holding its own
 * locks across backend I/O). Fixed statements are compiled once per connection ({@link Statements}); a replace
 * rewrites the metadata index rows only when the metadata changed. Every row is this server's: the conditional writes
 * change any row in an expected state, and the recovery reads every row.
 */
public final class SqliteSandboxStore extends JdbcSandboxStore {
    private static final String COLUMNS = Rows.COLUMNS;

    private final Database db;
    private final SqliteTemplateBuildStore templateBuilds;
    private final SqliteVolumeStore volumes;

    private SqliteSandboxStore(Database db) {
        super(db, Optional.empty(), MOUNTING); // every row is this server's
        this.db = db;
        this.templateBuilds = new SqliteTemplateBuildStore(db);
        this.volumes = new SqliteVolumeStore(db);
    }

    /** Volume records, in the same database. */
    @Override
    public VolumeStore volumes() {
        return volumes;
    }

    /** Templates requested through the build API, their builds and logs, in the same database. */
    @Override
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
    /** Each sandbox's volumes are a JSON array of objects. */
    private static final String MOUNTING = "SELECT DISTINCT sandbox.id FROM sandbox, json_each(sandbox.volumes) AS v "
            + "WHERE sandbox.volumes <> '[]' AND json_extract(v.value, '$.volumeId') = ?";
    /** The conditional writes' SQL, by the number of states they accept (index: that number). */
    private static final Map<Change, String[]> CONDITIONAL = new EnumMap<>(Change.class);

    static {
        for (Change change : Change.values()) {
            CONDITIONAL.put(change, Rows.byStateCount(change.head() + " WHERE id = ? AND state IN (", ")"));
        }
    }

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

    /** Any row in an expected state: every sandbox in the file is this server's. */
    @Override
    protected boolean write(PreparedStatements s, SandboxId id, Set<SandboxState> expected, Change change, Binder set)
            throws SQLException {
        PreparedStatement st = s.prepared(CONDITIONAL.get(change)[expected.size()]);
        int next = set.bind(st);
        st.setString(next++, id.value());
        Rows.bindStates(st, next, expected);
        return st.executeUpdate() == 1;
    }

    @Override
    public void close() {
        db.close();
    }
}
