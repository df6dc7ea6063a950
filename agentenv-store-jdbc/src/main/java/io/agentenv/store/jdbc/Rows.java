package io.agentenv.store.jdbc;

import io.agentenv.orchestrator.Cursor;
import io.agentenv.orchestrator.Page;
import io.agentenv.orchestrator.SandboxRecord;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.orchestrator.SnapshotRecord;
import io.agentenv.orchestrator.StoredState;
import io.agentenv.orchestrator.TimeoutAction;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * Row mapping: binding records to statements and reading them back. JSON values are bound with
 * {@link #bindJson} (a driver with a JSON column type infers it from the column), booleans as booleans.
 */
public final class Rows {
    /** The sandbox table's record columns, in the order {@link #bindRecord} binds and {@link #toRecord} reads them. */
    public static final String COLUMNS = "id, template, alias, state, started_at, timeout_ms, expires_at, on_timeout, "
            + "timeout_pause_mode, auto_resume, secure, cpu_count, memory_mib, disk_size_mib, metadata, env_vars, network, "
            + "custom_extension_params, paused_state, paused_artifact_dir, instance_id, mask_request_host, guest_defaults, "
            + "volumes";
    /** How many {@link #COLUMNS} there are. */
    public static final int COLUMN_COUNT = 24;

    /** The cursor that continues a page after an item. */
    @FunctionalInterface
    public interface CursorOf<T> {
        Cursor of(T item);
    }

    /** Reads the current row of a result set. */
    @FunctionalInterface
    public interface RowMapper<T> {
        T map(ResultSet rs) throws SQLException;
    }

    private Rows() {}

    /** The first row of {@code st}'s query, mapped; empty when there is none. */
    public static <T> Optional<T> first(PreparedStatement st, RowMapper<T> mapper) throws SQLException {
        try (ResultSet rs = st.executeQuery()) {
            return rs.next() ? Optional.of(mapper.map(rs)) : Optional.empty();
        }
    }

    /** Every row of {@code st}'s query, mapped, in the query's order. */
    public static <T> List<T> all(PreparedStatement st, RowMapper<T> mapper) throws SQLException {
        List<T> rows = new ArrayList<>();
        try (ResultSet rs = st.executeQuery()) {
            while (rs.next()) {
                rows.add(mapper.map(rs));
            }
        }
        return rows;
    }

    /** A page of at most {@code limit} of {@code rows} (read with one row more, which says whether there is more). */
    public static <T> Page<T> page(List<T> rows, int limit, CursorOf<T> cursorOf) {
        if (rows.size() <= limit) {
            return new Page<>(rows, Optional.empty());
        }
        List<T> items = rows.subList(0, limit);
        return new Page<>(items, Optional.of(cursorOf.of(items.getLast())));
    }

    /** {@code count} comma-separated placeholders. */
    public static String placeholders(int count) {
        return String.join(", ", Collections.nCopies(count, "?"));
    }

    /**
     * A conditional statement's SQL for each number of accepted states (index 0 unused), {@code head} and {@code tail}
     * around the states' placeholders: built once, so a call neither builds its SQL nor misses the statement cache.
     */
    public static String[] byStateCount(String head, String tail) {
        String[] sql = new String[SandboxState.values().length + 1];
        for (int count = 1; count < sql.length; count++) {
            sql[count] = head + placeholders(count) + tail;
        }
        return sql;
    }

    /** Binds the states' names from index {@code first}; returns the next free index. */
    public static int bindStates(PreparedStatement st, int first, Set<SandboxState> states) throws SQLException {
        int i = first;
        for (SandboxState state : states) {
            st.setString(i++, state.name());
        }
        return i;
    }

    /** Binds strings, longs and ints from index 1, in order. */
    public static void bindAll(PreparedStatement st, List<Object> args) throws SQLException {
        for (int i = 0; i < args.size(); i++) {
            switch (args.get(i)) {
                case String s -> st.setString(i + 1, s);
                case Long l -> st.setLong(i + 1, l);
                case Integer n -> st.setInt(i + 1, n);
                default ->
                    throw new IllegalArgumentException(
                            "unsupported bind type " + args.get(i).getClass());
            }
        }
    }

    /**
     * Binds the 24 columns of {@link #COLUMNS} from index 1, the metadata as {@code metadata} (its encoding, which the
     * caller also compares with what is stored); returns the next free index.
     */
    public static int bindRecord(PreparedStatement st, SandboxRecord r, String metadata) throws SQLException {
        st.setString(1, r.id().value());
        st.setString(2, r.template().value());
        st.setString(3, r.alias().orElse(null));
        st.setString(4, r.state().name());
        st.setLong(5, Codec.nanos(r.startedAt()));
        st.setLong(6, r.timeout().toMillis());
        if (r.expiresAt().isPresent()) {
            st.setLong(7, Codec.nanos(r.expiresAt().get()));
        } else {
            st.setNull(7, Types.BIGINT);
        }
        st.setString(8, r.onTimeout().name());
        st.setString(9, r.timeoutPauseMode().name());
        st.setBoolean(10, r.autoResume());
        st.setBoolean(11, r.secure());
        st.setInt(12, r.resources().cpuCount());
        st.setInt(13, r.resources().memoryMiB());
        st.setInt(14, r.resources().diskSizeMiB());
        bindJson(st, 15, metadata);
        bindJson(st, 16, Codec.map(r.envVars()));
        bindJson(st, 17, Codec.network(r.network()));
        st.setString(18, r.customExtensionParams());
        if (r.paused().isPresent()) {
            st.setBytes(19, r.paused().get().encoded());
            st.setString(20, r.paused().get().artifactDir().toString());
        } else {
            st.setNull(19, Types.VARBINARY);
            st.setNull(20, Types.VARCHAR);
        }
        st.setString(21, r.instanceId().map(UUID::toString).orElse(null));
        st.setString(22, r.maskRequestHost().orElse(null));
        bindJson(st, 23, Codec.guestDefaults(r.guestDefaults()));
        bindJson(st, 24, Codec.volumes(r.volumes()));
        return 25;
    }

    /**
     * Binds a JSON value as a value of no declared type: SQLite stores the text, PostgreSQL takes it as the column's
     * type (jsonb) without a cast in the SQL.
     */
    public static void bindJson(PreparedStatement st, int index, String json) throws SQLException {
        st.setObject(index, json, Types.OTHER);
    }

    /** The metadata's index rows (none, and no statement, for a record without metadata). */
    public static void writeMetadata(PreparedStatements statements, SandboxRecord record) throws SQLException {
        if (record.metadata().isEmpty()) {
            return;
        }
        PreparedStatement st =
                statements.prepared("INSERT INTO sandbox_metadata (sandbox_id, key, value) VALUES (?, ?, ?)");
        for (Map.Entry<String, String> pair : record.metadata().entrySet()) {
            st.setString(1, record.id().value());
            st.setString(2, pair.getKey());
            st.setString(3, pair.getValue());
            st.executeUpdate();
        }
    }

    /** The record from a row of {@code SELECT} {@link #COLUMNS}, read by position (in the order of the list). */
    public static SandboxRecord toRecord(ResultSet rs) throws SQLException {
        long expires = rs.getLong(7);
        Optional<Instant> expiresAt = rs.wasNull() ? Optional.empty() : Optional.of(Codec.instant(expires));
        byte[] pausedState = rs.getBytes(19);
        String pausedDir = rs.getString(20);
        Optional<StoredState> paused = pausedState == null || pausedDir == null
                ? Optional.empty()
                : Optional.of(new StoredState(pausedState, Path.of(pausedDir)));
        return new SandboxRecord(
                new SandboxId(rs.getString(1)),
                new TemplateId(rs.getString(2)),
                Optional.ofNullable(rs.getString(3)),
                SandboxState.valueOf(rs.getString(4)),
                Codec.instant(rs.getLong(5)),
                Duration.ofMillis(rs.getLong(6)),
                expiresAt,
                TimeoutAction.valueOf(rs.getString(8)),
                PauseMode.valueOf(rs.getString(9)),
                rs.getBoolean(10),
                rs.getBoolean(11),
                new Resources(rs.getInt(12), rs.getInt(13), rs.getInt(14)),
                Codec.map(rs.getString(15)),
                Codec.map(rs.getString(16)),
                Codec.network(rs.getString(17)),
                rs.getString(18),
                paused,
                Optional.ofNullable(rs.getString(21)).map(UUID::fromString),
                Optional.ofNullable(rs.getString(22)),
                Codec.guestDefaults(rs.getString(23)),
                Codec.volumes(rs.getString(24)));
    }

    /** The snapshot from a row of {@code SELECT *} of the snapshot table, with its aliases (read with another query). */
    public static SnapshotRecord toSnapshot(PreparedStatements statements, ResultSet rs) throws SQLException {
        String id = rs.getString("id");
        PreparedStatement st =
                statements.prepared("SELECT alias FROM snapshot_alias WHERE snapshot_id = ? ORDER BY alias");
        st.setString(1, id);
        List<String> aliases = all(st, names -> names.getString(1));
        return new SnapshotRecord(
                new TemplateId(id),
                aliases,
                Optional.ofNullable(rs.getString("source_sandbox")).map(SandboxId::new),
                new TemplateId(rs.getString("source_template")),
                Codec.map(rs.getString("env_vars")),
                new Resources(rs.getInt("cpu_count"), rs.getInt("memory_mib"), rs.getInt("disk_size_mib")),
                new StoredState(rs.getBytes("state"), Path.of(rs.getString("artifact_dir"))),
                Codec.instant(rs.getLong("created_at")),
                Codec.instant(rs.getLong("updated_at")),
                rs.getString("custom_extension_params"),
                Codec.guestDefaults(rs.getString("guest_defaults")),
                Codec.volumes(rs.getString("volumes")));
    }
}
