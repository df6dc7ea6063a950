package io.agentenv.store.jdbc;

import static java.util.Objects.requireNonNull;

import io.agentenv.orchestrator.Cursor;
import io.agentenv.orchestrator.Page;
import io.agentenv.orchestrator.SandboxQuery;
import io.agentenv.orchestrator.SandboxRecord;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.SnapshotQuery;
import io.agentenv.orchestrator.SnapshotRecord;
import io.agentenv.orchestrator.SortOrder;
import io.agentenv.orchestrator.TemplateBuildStore;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import io.agentenv.volumes.VolumeStore;
import java.security.SecureRandom;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What every SQL {@link SandboxStore} does the same way, in standard SQL over the subclass's {@link Transactions}:
 * the conditional writes' statements and bindings, the reads, the keyset-paginated list, the snapshot catalog and the
 * token seed. The subclass inserts rows, decides which rows a conditional write may change ({@link #write}) and which
 * rows its recovery reads (the constructor's own rows), and finds volume mounts in its JSON.
 */
public abstract class JdbcSandboxStore implements SandboxStore {
    private static final String TOKEN_SEED = "token_seed";
    private static final String GET = "SELECT " + Rows.COLUMNS + " FROM sandbox WHERE id = ?";
    private static final String READ_SEED = "SELECT value FROM secret WHERE name = ?";
    private static final String CREATE_SEED =
            "INSERT INTO secret (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING";

    private final Transactions db;
    private final String all;
    private final String listExpired;
    private final String idsIn;
    private final String mounting;

    /**
     * A store on {@code db}.
     *
     * @param ownRows the condition on the sandbox table that picks the rows this store's own recovery reads
     *     ({@link #all()}, {@link #idsIn}, {@link #listExpired}), its parameters bound by {@link #bindOwnRows}; empty
     *     when every row is
     * @param mountingQuery the query of the ids of the sandboxes that mount a volume (one parameter: the volume id)
     */
    protected JdbcSandboxStore(Transactions db, Optional<String> ownRows, String mountingQuery) {
        this.db = requireNonNull(db, "db is null");
        String where = " WHERE "
                + requireNonNull(ownRows, "ownRows is null")
                        .map(c -> c + " AND ")
                        .orElse("");
        this.all = "SELECT " + Rows.COLUMNS + " FROM sandbox"
                + ownRows.map(c -> " WHERE " + c).orElse("") + " ORDER BY started_at, id";
        this.listExpired = "SELECT id FROM sandbox" + where
                + "state = 'RUNNING' AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at, id";
        this.idsIn = "SELECT id FROM sandbox" + where + "state = ?";
        this.mounting = requireNonNull(mountingQuery, "mountingQuery is null");
    }

    /** Binds the parameters of the own rows' condition from index {@code first}; returns the next free index. */
    protected int bindOwnRows(PreparedStatement st, int first) throws SQLException {
        return first;
    }

    /** The volume records kept in the same database. */
    public abstract VolumeStore volumes();

    /** The template build records kept in the same database. */
    public abstract TemplateBuildStore templateBuilds();

    @Override
    public Optional<SandboxRecord> get(SandboxId id) {
        requireNonNull(id, "id is null");
        return db.read("get", id, s -> {
            PreparedStatement st = s.prepared(GET);
            st.setString(1, id.value());
            return Rows.first(st, rs -> Rows.toRecord(rs));
        });
    }

    // ---- conditional writes ------------------------------------------------------------------------------------

    /** What a conditional write changes: a SET clause (its parameters bound from index 1), or the row's deletion. */
    protected enum Change {
        STATE("state = ?"),
        RECORD(String.join(" = ?, ", Rows.COLUMNS.split(", ")) + " = ?"),
        TTL("timeout_ms = ?, expires_at = ?"),
        NETWORK("network = ?"),
        CUSTOM_EXTENSION_PARAMS("custom_extension_params = ?"),
        DELETE(null);

        private final String set;

        Change(String set) {
            this.set = set;
        }

        /** The statement up to its WHERE clause: an UPDATE of the SET clause and the row's version, or a DELETE. */
        public String head() {
            return set == null ? "DELETE FROM sandbox" : "UPDATE sandbox SET " + set + ", version = version + 1";
        }

        /** Whether the statement is an UPDATE (whose SET clause a store may extend). */
        public boolean updates() {
            return set != null;
        }
    }

    /** Binds a conditional write's SET parameters from index 1; returns the next free index. */
    @FunctionalInterface
    protected interface Binder {
        int bind(PreparedStatement st) throws SQLException;
    }

    /**
     * Runs one conditional write in the caller's transaction: {@code change} of row {@code id} if its state is in
     * {@code expected} (never empty) and the store lets this writer change the row, {@code set} binding the SET
     * parameters. True when a row changed.
     */
    protected abstract boolean write(
            PreparedStatements statements, SandboxId id, Set<SandboxState> expected, Change change, Binder set)
            throws SQLException;

    /** Runs first in each conditional write's transaction (a store may lock what its writes need); does nothing here. */
    protected void begin(PreparedStatements statements, Set<SandboxState> expected) throws SQLException {}

    /** The query (its one parameter: the id) that reads a row's stored metadata before a replace. */
    protected String storedMetadataQuery() {
        return "SELECT metadata FROM sandbox WHERE id = ?";
    }

    @Override
    public boolean transition(SandboxId id, Set<SandboxState> from, SandboxState to) {
        requireNonNull(id, "id is null");
        requireNonNull(to, "to is null");
        return conditional("transition", id, from, Change.STATE, st -> {
            st.setString(1, to.name());
            return 2;
        });
    }

    /**
     * One UPDATE of the record's columns; the metadata index rows are rewritten only when the metadata changed (a
     * create's CREATING to RUNNING replace keeps them: the stored metadata column is read first and compared, as its
     * encoding, else as the map it decodes to).
     */
    @Override
    public boolean replace(SandboxRecord record, Set<SandboxState> expected) {
        requireNonNull(record, "record is null");
        if (expected.isEmpty()) {
            return false;
        }
        String metadata = Codec.map(record.metadata());
        return db.write("replace", record.id(), Durability.NOW, s -> {
            begin(s, expected);
            String stored = null;
            PreparedStatement read = s.prepared(storedMetadataQuery());
            read.setString(1, record.id().value());
            try (ResultSet rs = read.executeQuery()) {
                if (rs.next()) {
                    stored = rs.getString(1);
                }
            }
            if (!write(s, record.id(), expected, Change.RECORD, st -> Rows.bindRecord(st, record, metadata))) {
                return false;
            }
            if (stored == null || !(metadata.equals(stored) || Codec.map(stored).equals(record.metadata()))) {
                PreparedStatement clear = s.prepared("DELETE FROM sandbox_metadata WHERE sandbox_id = ?");
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
        return conditional("update the TTL of", id, expected, Change.TTL, st -> {
            st.setLong(1, timeout.toMillis());
            if (expiresAt.isPresent()) {
                st.setLong(2, Codec.nanos(expiresAt.get()));
            } else {
                st.setNull(2, Types.BIGINT);
            }
            return 3;
        });
    }

    @Override
    public boolean updateNetwork(SandboxId id, Set<SandboxState> expected, NetworkPolicy network) {
        requireNonNull(id, "id is null");
        requireNonNull(network, "network is null");
        return conditional("update the network of", id, expected, Change.NETWORK, st -> {
            Rows.bindJson(st, 1, Codec.network(network));
            return 2;
        });
    }

    @Override
    public boolean updateCustomExtensionParams(SandboxId id, Set<SandboxState> expected, String customExtensionParams) {
        requireNonNull(id, "id is null");
        requireNonNull(customExtensionParams, "customExtensionParams is null");
        return conditional(
                "update the custom extension params of", id, expected, Change.CUSTOM_EXTENSION_PARAMS, st -> {
                    st.setString(1, customExtensionParams);
                    return 2;
                });
    }

    @Override
    public boolean delete(SandboxId id, Set<SandboxState> expected) {
        requireNonNull(id, "id is null");
        return conditional("delete", id, expected, Change.DELETE, st -> 1);
    }

    /** One conditional write, a transaction of its own. */
    private boolean conditional(String what, SandboxId id, Set<SandboxState> expected, Change change, Binder set) {
        if (expected.isEmpty()) {
            return false;
        }
        return db.write(what, id, Durability.NOW, s -> {
            begin(s, expected);
            return write(s, id, expected, change, set);
        });
    }

    // ---- reads -------------------------------------------------------------------------------------------------

    @Override
    public List<SandboxId> listExpired(Instant now) {
        requireNonNull(now, "now is null");
        return db.read("list expired", s -> {
            PreparedStatement st = s.prepared(listExpired);
            st.setLong(bindOwnRows(st, 1), Codec.nanos(now));
            return ids(st);
        });
    }

    @Override
    public Set<SandboxId> idsIn(SandboxState state) {
        requireNonNull(state, "state is null");
        return db.read("ids in state", s -> {
            PreparedStatement st = s.prepared(idsIn);
            st.setString(bindOwnRows(st, 1), state.name());
            return Set.copyOf(ids(st));
        });
    }

    @Override
    public List<SandboxRecord> all() {
        return db.read("list all sandboxes", s -> {
            PreparedStatement st = s.prepared(all);
            bindOwnRows(st, 1);
            return records(st);
        });
    }

    @Override
    public Set<SandboxId> mounting(String volumeId) {
        requireNonNull(volumeId, "volumeId is null");
        return db.read("sandboxes mounting a volume", s -> {
            PreparedStatement st = s.prepared(mounting);
            st.setString(1, volumeId);
            return Set.copyOf(ids(st));
        });
    }

    @Override
    public Page<SandboxRecord> list(SandboxQuery query) {
        requireNonNull(query, "query is null");
        if (query.limit() == 0 || query.states().isEmpty()) {
            return new Page<>(List.of(), Optional.empty());
        }
        StringBuilder sql = new StringBuilder("SELECT " + Rows.COLUMNS + " FROM sandbox s WHERE state IN (")
                .append(Rows.placeholders(query.states().size()))
                .append(')');
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
            sql.append(
                    " AND EXISTS (SELECT 1 FROM sandbox_metadata m WHERE m.sandbox_id = s.id AND m.key = ? AND m.value = ?)");
            args.add(pair.getKey());
            args.add(pair.getValue());
        }
        boolean desc = query.order() == SortOrder.DESC;
        query.after().ifPresent(cursor -> {
            String cmp = desc ? "<" : ">";
            sql.append(" AND (started_at ")
                    .append(cmp)
                    .append(" ? OR (started_at = ? AND id ")
                    .append(cmp)
                    .append(" ?))");
            args.add(Codec.nanos(cursor.at()));
            args.add(Codec.nanos(cursor.at()));
            args.add(cursor.id());
        });
        String direction = desc ? " DESC" : " ASC";
        sql.append(" ORDER BY started_at")
                .append(direction)
                .append(", id")
                .append(direction)
                .append(" LIMIT ?");
        args.add(query.limit() + 1);
        List<SandboxRecord> rows = db.read("list sandboxes", s -> {
            try (PreparedStatement st = s.connection().prepareStatement(sql.toString())) {
                Rows.bindAll(st, args);
                return records(st);
            }
        });
        return Rows.page(rows, query.limit(), r -> new Cursor(r.startedAt(), r.id().value()));
    }

    // ---- snapshot catalog --------------------------------------------------------------------------------------

    @Override
    public void insertSnapshot(SnapshotRecord snapshot) {
        requireNonNull(snapshot, "snapshot is null");
        db.write("insert snapshot", snapshot.id(), Durability.NOW, s -> {
            PreparedStatement row = s.prepared("INSERT INTO snapshot (id, source_sandbox, source_template, "
                    + "env_vars, cpu_count, memory_mib, disk_size_mib, state, artifact_dir, created_at, updated_at, "
                    + "custom_extension_params, guest_defaults, volumes) "
                    + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
            row.setString(1, snapshot.id().value());
            row.setString(2, snapshot.sourceSandbox().map(SandboxId::value).orElse(null));
            row.setString(3, snapshot.sourceTemplate().value());
            Rows.bindJson(row, 4, Codec.map(snapshot.envVars()));
            row.setInt(5, snapshot.resources().cpuCount());
            row.setInt(6, snapshot.resources().memoryMiB());
            row.setInt(7, snapshot.resources().diskSizeMiB());
            row.setBytes(8, snapshot.state().encoded());
            row.setString(9, snapshot.state().artifactDir().toString());
            row.setLong(10, Codec.nanos(snapshot.createdAt()));
            row.setLong(11, Codec.nanos(snapshot.updatedAt()));
            row.setString(12, snapshot.customExtensionParams());
            Rows.bindJson(row, 13, Codec.guestDefaults(snapshot.guestDefaults()));
            Rows.bindJson(row, 14, Codec.volumes(snapshot.volumes()));
            row.executeUpdate();
            PreparedStatement aliases = s.prepared("INSERT INTO snapshot_alias (alias, snapshot_id) VALUES (?, ?) "
                    + "ON CONFLICT (alias) DO UPDATE SET snapshot_id = excluded.snapshot_id");
            for (String alias : snapshot.aliases()) {
                aliases.setString(1, alias);
                aliases.setString(2, snapshot.id().value());
                aliases.executeUpdate();
            }
            return null;
        });
    }

    @Override
    public Optional<SnapshotRecord> findSnapshot(String idOrAlias) {
        requireNonNull(idOrAlias, "idOrAlias is null");
        return db.read("find snapshot", s -> {
            PreparedStatement st = s.prepared("SELECT * FROM snapshot WHERE id = ? "
                    + "UNION ALL SELECT s.* FROM snapshot s JOIN snapshot_alias a ON a.snapshot_id = s.id WHERE a.alias = ? "
                    + "LIMIT 1");
            st.setString(1, idOrAlias);
            st.setString(2, idOrAlias);
            return Rows.first(st, rs -> Rows.toSnapshot(s, rs));
        });
    }

    @Override
    public Page<SnapshotRecord> listSnapshots(SnapshotQuery query) {
        requireNonNull(query, "query is null");
        if (query.limit() == 0) {
            return new Page<>(List.of(), Optional.empty());
        }
        // template build steps' cached layers are the builder's, not the catalog's to show
        StringBuilder sql = new StringBuilder(
                "SELECT * FROM snapshot s WHERE NOT EXISTS (SELECT 1 FROM template_layer l WHERE l.snapshot_id = s.id)");
        List<Object> args = new ArrayList<>();
        query.sandbox().ifPresent(sandbox -> {
            sql.append(" AND source_sandbox = ?");
            args.add(sandbox.value());
        });
        query.name().ifPresent(name -> {
            sql.append(
                    " AND (id = ? OR EXISTS (SELECT 1 FROM snapshot_alias a WHERE a.snapshot_id = s.id AND a.alias = ?))");
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
        List<SnapshotRecord> rows = db.read("list snapshots", s -> {
            try (PreparedStatement st = s.connection().prepareStatement(sql.toString())) {
                Rows.bindAll(st, args);
                return Rows.all(st, rs -> Rows.toSnapshot(s, rs));
            }
        });
        return Rows.page(rows, query.limit(), s -> new Cursor(s.createdAt(), s.id().value()));
    }

    @Override
    public boolean deleteSnapshot(TemplateId id) {
        requireNonNull(id, "id is null");
        return db.write("delete snapshot", id, Durability.NOW, s -> {
            PreparedStatement st = s.prepared("DELETE FROM snapshot WHERE id = ?");
            st.setString(1, id.value());
            return st.executeUpdate() == 1;
        });
    }

    // ---- secrets -----------------------------------------------------------------------------------------------

    /**
     * Read, else created: a new seed is inserted unless another writer's is there by then (which wins), and the stored
     * one is read back, so concurrent first calls on several connections agree.
     */
    @Override
    public String tokenSeed() {
        return db.write("token seed", s -> {
            Optional<String> stored = readSeed(s);
            if (stored.isPresent()) {
                return stored.get();
            }
            byte[] seed = new byte[32];
            new SecureRandom().nextBytes(seed);
            try (PreparedStatement st = s.connection().prepareStatement(CREATE_SEED)) {
                st.setString(1, TOKEN_SEED);
                st.setString(2, HexFormat.of().formatHex(seed));
                st.executeUpdate();
            }
            return readSeed(s).orElseThrow(() -> new SQLException("the token seed was not stored"));
        });
    }

    private static Optional<String> readSeed(PreparedStatements s) throws SQLException {
        try (PreparedStatement st = s.connection().prepareStatement(READ_SEED)) {
            st.setString(1, TOKEN_SEED);
            return Rows.first(st, rs -> rs.getString(1));
        }
    }

    /** The first column of every row of {@code st}'s query, as sandbox ids in the query's order. */
    private static List<SandboxId> ids(PreparedStatement st) throws SQLException {
        return Rows.all(st, rs -> new SandboxId(rs.getString(1)));
    }

    /** Every row of {@code st}'s query of {@link Rows#COLUMNS}, as records in the query's order. */
    private static List<SandboxRecord> records(PreparedStatement st) throws SQLException {
        return Rows.all(st, Rows::toRecord);
    }
}
