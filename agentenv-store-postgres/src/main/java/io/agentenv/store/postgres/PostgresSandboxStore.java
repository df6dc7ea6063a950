package io.agentenv.store.postgres;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.FencingToken;
import io.agentenv.orchestrator.SandboxRecord;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.StoreException;
import io.agentenv.orchestrator.TemplateBuildStore;
import io.agentenv.spi.SandboxId;
import io.agentenv.store.jdbc.Codec;
import io.agentenv.store.jdbc.JdbcSandboxStore;
import io.agentenv.store.jdbc.PreparedStatements;
import io.agentenv.store.jdbc.Rows;
import io.agentenv.volumes.VolumeStore;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link SandboxStore} in the cluster's database, opened for one node's registration ({@link FencingToken}). Every
 * sandbox row names its owner, a node and the epoch of that node's registration that wrote it.
 *
 * <ul>
 *   <li>An insert makes the row the token's, and only while the token is the node's current registration and the node
 *       is not dead; otherwise it fails with {@link StoreException} (the node is fenced).
 *   <li>The conditional writes (transition, replace, the narrow updates, delete) change only a row the token owns. When
 *       the only state they accept is PAUSED they may also take over a row that no node owns (released by a dead
 *       node) or that a DEAD or DRAINING node owns: the row becomes the token's (a paused sandbox resumes or is deleted
 *       on whichever node a gateway chose). A paused row of another ACTIVE node is not taken. A write by a fenced
 *       token fails with {@link StoreException}.
 *   <li>Reads of single sandboxes, the list, the snapshot catalog, volume mounts and the token seed are cluster-wide;
 *       {@link #all()}, {@link #idsIn} and {@link #listExpired} are the token's rows only (the restart recovery, the
 *       liveness check and the TTL expiry of the node that runs them).
 *   <li>Opening the store adopts the node's rows written under its earlier registrations, so a restarted node's
 *       recovery finds them.
 * </ul>
 *
 * A write that makes a row the token's holds a share lock on the node's row until it commits, so it cannot interleave
 * with the registry declaring the node dead or registering it again; the other writes rely on the lock of the sandbox
 * row they change. Closing the store leaves the database open (it belongs to whoever opened it).
 */
public final class PostgresSandboxStore extends JdbcSandboxStore {
    private static final Logger log = LoggerFactory.getLogger(PostgresSandboxStore.class);
    private static final String COLUMNS = Rows.COLUMNS;
    private static final Set<SandboxState> TAKE_OVER = Set.of(SandboxState.PAUSED);

    /** The rows of the token's registration (bound: node, epoch). */
    private static final String OWN_ROWS = "node_id = ? AND node_epoch = ?";

    private static final String CURRENT = "SELECT 1 FROM node WHERE id = ? AND epoch = ? AND state <> 'DEAD'";
    private static final String LOCK_CURRENT = CURRENT + " FOR KEY SHARE";
    /** The token owns the row (bound: node, epoch, node, epoch). */
    private static final String OWNED = " AND " + OWN_ROWS + " AND EXISTS (" + CURRENT + ")";
    /** A paused row the token owns, or one that is free to take (bound: node, epoch). */
    private static final String TAKEABLE =
            " AND state = 'PAUSED' AND (node_id IS NULL OR (node_id = ? AND node_epoch = ?)"
                    + " OR node_id IN (SELECT id FROM node WHERE state IN ('DEAD', 'DRAINING')))";

    private static final String INSERT = "INSERT INTO sandbox (" + COLUMNS + ", node_id, node_epoch) VALUES ("
            + Rows.placeholders(Rows.COLUMN_COUNT + 2) + ")";
    private static final String ADOPT =
            "UPDATE sandbox SET node_epoch = ?, version = version + 1 WHERE node_id = ? AND node_epoch <> ?";
    private static final String MOUNTING =
            "SELECT id FROM sandbox WHERE volumes @> jsonb_build_array(jsonb_build_object('volumeId', ?::text))";

    /** The conditional writes' SQL for the token's own rows, by the number of states they accept (index). */
    private static final Map<Change, String[]> OWNED_ROWS = new EnumMap<>(Change.class);
    /** The conditional writes' SQL for a paused row the token owns or takes over. */
    private static final Map<Change, String> TAKE_OVER_ROWS = new EnumMap<>(Change.class);

    static {
        for (Change change : Change.values()) {
            OWNED_ROWS.put(change, Rows.byStateCount(change.head() + " WHERE id = ? AND state IN (", ")" + OWNED));
            TAKE_OVER_ROWS.put(
                    change,
                    change.head() + (change.updates() ? ", node_id = ?, node_epoch = ?" : "") + " WHERE id = ?"
                            + TAKEABLE);
        }
    }

    private final ClosableTransactions db;
    private final FencingToken token;
    private final PostgresTemplateBuildStore templateBuilds;
    private final PostgresVolumeStore volumes;

    private PostgresSandboxStore(ClosableTransactions db, PostgresDatabase database, FencingToken token) {
        super(db, Optional.of(OWN_ROWS), MOUNTING);
        this.db = db;
        this.token = token;
        this.templateBuilds = new PostgresTemplateBuildStore(database, token.node());
        this.volumes = new PostgresVolumeStore(database);
    }

    /**
     * The store of the node registration {@code token}: first the node's rows of earlier registrations become this
     * one's. Fails with {@link StoreException} when the token is fenced.
     */
    public static PostgresSandboxStore open(PostgresDatabase db, FencingToken token) {
        requireNonNull(db, "db is null");
        requireNonNull(token, "token is null");
        int adopted = db.write("adopt the sandboxes of", token.node(), Durability.NOW, s -> {
            lockCurrent(s, token);
            PreparedStatement st = s.prepared(ADOPT);
            st.setLong(1, token.epoch());
            st.setString(2, token.node().value());
            st.setLong(3, token.epoch());
            return st.executeUpdate();
        });
        if (adopted > 0) {
            log.atInfo()
                    .addKeyValue("node", token.node())
                    .addKeyValue("epoch", token.epoch())
                    .addKeyValue("sandboxes", adopted)
                    .log("adopted the node's sandboxes of its earlier registrations");
        }
        return new PostgresSandboxStore(new ClosableTransactions(db, "sandbox store"), db, token);
    }

    /** The registration this store writes for. */
    public FencingToken token() {
        return token;
    }

    /** Volume records, in the same database (the cluster's). */
    @Override
    public VolumeStore volumes() {
        return volumes;
    }

    /** Templates requested through the build API, their builds and logs, in the same database; builds are this node's. */
    @Override
    public TemplateBuildStore templateBuilds() {
        return templateBuilds;
    }

    // ---- writes ------------------------------------------------------------------------------------------------

    /**
     * {@link Durability#WITH_NEXT_WRITE} commits with {@code synchronous_commit} off for this transaction only: the row
     * is visible at once and durable with the next synchronous commit.
     */
    @Override
    public void insert(SandboxRecord record, Durability durability) {
        requireNonNull(record, "record is null");
        requireNonNull(durability, "durability is null");
        db.write("insert", record.id(), durability, s -> {
            lockCurrent(s, token);
            PreparedStatement st = s.prepared(INSERT);
            int next = Rows.bindRecord(st, record, Codec.map(record.metadata()));
            bindToken(st, next);
            st.executeUpdate();
            Rows.writeMetadata(s, record);
            return null;
        });
    }

    /** A write that accepts only PAUSED may take the row over: the token's node row is share-locked first. */
    @Override
    protected void begin(PreparedStatements s, Set<SandboxState> expected) throws SQLException {
        if (TAKE_OVER.equals(expected)) {
            lockCurrent(s, token);
        }
    }

    /** Locks the row until the replace commits, so the metadata it compares with stays what is stored. */
    @Override
    protected String storedMetadataQuery() {
        return super.storedMetadataQuery() + " FOR NO KEY UPDATE";
    }

    /**
     * The token's own row, or with only PAUSED accepted also a row free to take over (which becomes the token's). No
     * row changed: false, or {@link StoreException} when the token is fenced.
     */
    @Override
    protected boolean write(PreparedStatements s, SandboxId id, Set<SandboxState> expected, Change change, Binder set)
            throws SQLException {
        boolean takeOver = TAKE_OVER.equals(expected);
        PreparedStatement st =
                s.prepared(takeOver ? TAKE_OVER_ROWS.get(change) : OWNED_ROWS.get(change)[expected.size()]);
        int next = set.bind(st);
        if (takeOver && change.updates()) {
            next = bindToken(st, next);
        }
        st.setString(next++, id.value());
        if (!takeOver) {
            next = Rows.bindStates(st, next, expected);
            next = bindToken(st, next);
        }
        bindToken(st, next);
        if (st.executeUpdate() == 1) {
            return true;
        }
        if (!takeOver) {
            requireCurrent(s, token); // a take-over checked it in begin
        }
        return false;
    }

    private int bindToken(PreparedStatement st, int index) throws SQLException {
        st.setString(index, token.node().value());
        st.setLong(index + 1, token.epoch());
        return index + 2;
    }

    /** Share-locks the token's node row until the transaction ends; throws if the token is fenced. */
    private static void lockCurrent(PreparedStatements s, FencingToken token) throws SQLException {
        check(s, LOCK_CURRENT, token);
    }

    /** Throws if the token is fenced. */
    private static void requireCurrent(PreparedStatements s, FencingToken token) throws SQLException {
        check(s, CURRENT, token);
    }

    private static void check(PreparedStatements s, String sql, FencingToken token) throws SQLException {
        PreparedStatement st = s.prepared(sql);
        st.setString(1, token.node().value());
        st.setLong(2, token.epoch());
        try (ResultSet rs = st.executeQuery()) {
            if (!rs.next()) {
                throw new StoreException(
                        "node " + token.node() + " is fenced: epoch " + token.epoch()
                                + " is no longer its registration, or it was declared dead",
                        null);
            }
        }
    }

    // ---- this node's rows --------------------------------------------------------------------------------------

    /** The token's rows: this registration's. */
    @Override
    protected int bindOwnRows(PreparedStatement st, int first) throws SQLException {
        return bindToken(st, first);
    }

    /** Refuses further calls; the database stays open. */
    @Override
    public void close() {
        db.close();
    }
}
