package io.agentenv.store.jdbc;

import static java.util.Objects.requireNonNull;

import io.agentenv.orchestrator.BuildLogLine;
import io.agentenv.orchestrator.BuildRecord;
import io.agentenv.orchestrator.SandboxStore.Durability;
import io.agentenv.orchestrator.TagAssignment;
import io.agentenv.orchestrator.TemplateBuildStore;
import io.agentenv.orchestrator.TemplateRecord;
import io.agentenv.spi.Resources;
import io.agentenv.spi.TemplateId;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@link TemplateBuildStore} in standard SQL over the subclass's {@link Transactions}. With a node, each build row
 * records the node that runs it and {@link #unfinishedBuilds()} returns only that node's (the rest of the catalog is
 * shared by every node).
 */
public abstract class JdbcTemplateBuildStore implements TemplateBuildStore {
    private static final String BUILD_COLUMNS = "id, template_id, status, reason, step, tags, created_at, updated_at";
    private static final String UNFINISHED = "SELECT * FROM template_build WHERE status IN ('WAITING', 'BUILDING')";

    private final Transactions db;
    private final Optional<String> node;
    private final String insertBuild;
    private final String unfinished;

    /**
     * A store whose builds are recorded with {@code node} and whose unfinished builds are that node's, or, with no
     * node, one whose builds are all its own.
     */
    protected JdbcTemplateBuildStore(Transactions db, Optional<String> node) {
        this.db = requireNonNull(db, "db is null");
        this.node = requireNonNull(node, "node is null");
        this.insertBuild = node.isPresent()
                ? "INSERT INTO template_build (" + BUILD_COLUMNS + ", node_id) VALUES (" + Rows.placeholders(9) + ")"
                : "INSERT INTO template_build (" + BUILD_COLUMNS + ") VALUES (" + Rows.placeholders(8) + ")";
        this.unfinished = UNFINISHED + (node.isPresent() ? " AND node_id = ?" : "") + " ORDER BY created_at, id";
    }

    // ---- templates ---------------------------------------------------------------------------------------------

    @Override
    public boolean insertTemplate(TemplateRecord template) {
        requireNonNull(template, "template is null");
        return db.write("insert template", template.id(), Durability.NOW, s -> {
            PreparedStatement taken = s.prepared("SELECT 1 FROM template_name WHERE name = ? AND template_id <> ?");
            for (String name : template.names()) {
                taken.setString(1, name);
                taken.setString(2, template.id().value());
                try (ResultSet rs = taken.executeQuery()) {
                    if (rs.next()) {
                        return false;
                    }
                }
            }
            PreparedStatement row = s.prepared("INSERT INTO template (id, cpu_count, memory_mib, disk_size_mib, "
                    + "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                    + "cpu_count = excluded.cpu_count, memory_mib = excluded.memory_mib, "
                    + "disk_size_mib = excluded.disk_size_mib, updated_at = excluded.updated_at");
            row.setString(1, template.id().value());
            row.setInt(2, template.resources().cpuCount());
            row.setInt(3, template.resources().memoryMiB());
            row.setInt(4, template.resources().diskSizeMiB());
            row.setLong(5, Codec.nanos(template.createdAt()));
            row.setLong(6, Codec.nanos(template.updatedAt()));
            row.executeUpdate();
            PreparedStatement clear = s.prepared("DELETE FROM template_name WHERE template_id = ?");
            clear.setString(1, template.id().value());
            clear.executeUpdate();
            PreparedStatement name =
                    s.prepared("INSERT INTO template_name (name, template_id, position) VALUES (?, ?, ?)");
            for (int i = 0; i < template.names().size(); i++) {
                name.setString(1, template.names().get(i));
                name.setString(2, template.id().value());
                name.setInt(3, i);
                name.executeUpdate();
            }
            return true;
        });
    }

    @Override
    public Optional<TemplateRecord> findTemplate(String idOrName) {
        requireNonNull(idOrName, "idOrName is null");
        return db.read("find template", s -> {
            PreparedStatement st = s.prepared("SELECT * FROM template WHERE id = ? UNION ALL "
                    + "SELECT t.* FROM template t JOIN template_name n ON n.template_id = t.id WHERE n.name = ? "
                    + "LIMIT 1");
            st.setString(1, idOrName);
            st.setString(2, idOrName);
            return Rows.first(st, rs -> template(s, rs));
        });
    }

    @Override
    public List<TemplateRecord> templates() {
        return db.read(
                "list templates",
                s -> Rows.all(
                        s.prepared("SELECT * FROM template ORDER BY created_at DESC, id DESC"), rs -> template(s, rs)));
    }

    @Override
    public boolean deleteTemplate(TemplateId id) {
        requireNonNull(id, "id is null");
        return db.write("delete template", id, Durability.NOW, s -> {
            PreparedStatement st = s.prepared("DELETE FROM template WHERE id = ?");
            st.setString(1, id.value());
            return st.executeUpdate() == 1;
        });
    }

    private static TemplateRecord template(PreparedStatements s, ResultSet rs) throws SQLException {
        String id = rs.getString("id");
        PreparedStatement st = s.prepared("SELECT name FROM template_name WHERE template_id = ? ORDER BY position");
        st.setString(1, id);
        List<String> names = Rows.all(st, found -> found.getString(1));
        return new TemplateRecord(
                new TemplateId(id),
                names,
                new Resources(rs.getInt("cpu_count"), rs.getInt("memory_mib"), rs.getInt("disk_size_mib")),
                Codec.instant(rs.getLong("created_at")),
                Codec.instant(rs.getLong("updated_at")));
    }

    // ---- builds ------------------------------------------------------------------------------------------------

    @Override
    public void insertBuild(BuildRecord build) {
        requireNonNull(build, "build is null");
        db.write("insert build", build.id(), Durability.NOW, s -> {
            PreparedStatement st = s.prepared(insertBuild);
            st.setString(1, build.id());
            st.setString(2, build.template().value());
            st.setString(3, build.status().name());
            st.setString(4, build.reason().orElse(null));
            st.setString(5, build.step().orElse(null));
            Rows.bindJson(st, 6, Codec.list(build.tags()));
            st.setLong(7, Codec.nanos(build.createdAt()));
            st.setLong(8, Codec.nanos(build.updatedAt()));
            if (node.isPresent()) {
                st.setString(9, node.get());
            }
            st.executeUpdate();
            return null;
        });
    }

    @Override
    public Optional<BuildRecord> build(String buildId) {
        requireNonNull(buildId, "buildId is null");
        return db.read("read build", s -> {
            PreparedStatement st = s.prepared("SELECT * FROM template_build WHERE id = ?");
            st.setString(1, buildId);
            return Rows.first(st, rs -> build(rs));
        });
    }

    @Override
    public List<BuildRecord> builds(TemplateId template) {
        requireNonNull(template, "template is null");
        return db.read("list builds", s -> {
            PreparedStatement st =
                    s.prepared("SELECT * FROM template_build WHERE template_id = ? ORDER BY created_at DESC, id DESC");
            st.setString(1, template.value());
            return builds(st);
        });
    }

    @Override
    public boolean updateBuild(BuildRecord build, BuildRecord.Status expected) {
        requireNonNull(build, "build is null");
        requireNonNull(expected, "expected is null");
        return db.write("update build", build.id(), Durability.NOW, s -> {
            PreparedStatement st = s.prepared("UPDATE template_build SET status = ?, reason = ?, step = ?, "
                    + "updated_at = ?, snapshot_id = ? WHERE id = ? AND status = ?");
            st.setString(1, build.status().name());
            st.setString(2, build.reason().orElse(null));
            st.setString(3, build.step().orElse(null));
            st.setLong(4, Codec.nanos(build.updatedAt()));
            st.setString(5, build.snapshot().map(TemplateId::value).orElse(null));
            st.setString(6, build.id());
            st.setString(7, expected.name());
            return st.executeUpdate() == 1;
        });
    }

    @Override
    public List<BuildRecord> unfinishedBuilds() {
        return db.read("list unfinished builds", s -> {
            PreparedStatement st = s.prepared(unfinished);
            if (node.isPresent()) {
                st.setString(1, node.get());
            }
            return builds(st);
        });
    }

    private static List<BuildRecord> builds(PreparedStatement st) throws SQLException {
        return Rows.all(st, rs -> build(rs));
    }

    private static BuildRecord build(ResultSet rs) throws SQLException {
        return new BuildRecord(
                rs.getString("id"),
                new TemplateId(rs.getString("template_id")),
                BuildRecord.Status.valueOf(rs.getString("status")),
                Optional.ofNullable(rs.getString("reason")),
                Optional.ofNullable(rs.getString("step")),
                Codec.list(rs.getString("tags")),
                Codec.instant(rs.getLong("created_at")),
                Codec.instant(rs.getLong("updated_at")),
                Optional.ofNullable(rs.getString("snapshot_id")).map(TemplateId::new));
    }

    // ---- tags --------------------------------------------------------------------------------------------------

    @Override
    public void assignTag(TagAssignment tag) {
        requireNonNull(tag, "tag is null");
        db.write("assign template tag", tag.template(), Durability.NOW, s -> {
            PreparedStatement st = s.prepared("INSERT INTO template_tag (template_id, tag, build_id, assigned_at) "
                    + "VALUES (?, ?, ?, ?) ON CONFLICT (template_id, tag) DO UPDATE SET "
                    + "build_id = excluded.build_id, assigned_at = excluded.assigned_at");
            st.setString(1, tag.template().value());
            st.setString(2, tag.tag());
            st.setString(3, tag.buildId());
            st.setLong(4, Codec.nanos(tag.assignedAt()));
            st.executeUpdate();
            return null;
        });
    }

    @Override
    public boolean removeTag(TemplateId template, String tag) {
        requireNonNull(template, "template is null");
        requireNonNull(tag, "tag is null");
        return db.write("remove template tag", template, Durability.NOW, s -> {
            PreparedStatement st = s.prepared("DELETE FROM template_tag WHERE template_id = ? AND tag = ?");
            st.setString(1, template.value());
            st.setString(2, tag);
            return st.executeUpdate() == 1;
        });
    }

    @Override
    public List<TagAssignment> tags(TemplateId template) {
        requireNonNull(template, "template is null");
        return db.read("list template tags", s -> {
            PreparedStatement st = s.prepared(
                    "SELECT tag, build_id, assigned_at FROM template_tag WHERE template_id = ? ORDER BY tag");
            st.setString(1, template.value());
            return Rows.all(
                    st,
                    rs -> new TagAssignment(
                            template,
                            rs.getString("tag"),
                            rs.getString("build_id"),
                            Codec.instant(rs.getLong("assigned_at"))));
        });
    }

    // ---- cached layers -----------------------------------------------------------------------------------------

    @Override
    public Optional<TemplateId> useLayer(String key, Instant now) {
        requireNonNull(key, "key is null");
        requireNonNull(now, "now is null");
        return db.write("use template layer", null, Durability.WITH_NEXT_WRITE, s -> {
            PreparedStatement touch = s.prepared("UPDATE template_layer SET used_at = ? WHERE key = ?");
            touch.setLong(1, Codec.nanos(now));
            touch.setString(2, key);
            if (touch.executeUpdate() == 0) {
                return Optional.<TemplateId>empty();
            }
            PreparedStatement st = s.prepared("SELECT snapshot_id FROM template_layer WHERE key = ?");
            st.setString(1, key);
            return Rows.first(st, rs -> new TemplateId(rs.getString(1)));
        });
    }

    @Override
    public void putLayer(TemplateBuildStore.Layer layer, Instant now) {
        requireNonNull(layer, "layer is null");
        requireNonNull(now, "now is null");
        db.write("cache template layer", null, Durability.NOW, s -> {
            PreparedStatement st = s.prepared("INSERT INTO template_layer (key, snapshot_id, created_at, used_at) "
                    + "VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET snapshot_id = excluded.snapshot_id, "
                    + "created_at = excluded.created_at, used_at = excluded.used_at");
            st.setString(1, layer.key());
            st.setString(2, layer.snapshot().value());
            st.setLong(3, Codec.nanos(now));
            st.setLong(4, Codec.nanos(now));
            st.executeUpdate();
            return null;
        });
    }

    @Override
    public boolean removeLayer(String key) {
        requireNonNull(key, "key is null");
        return db.write("remove template layer", null, Durability.NOW, s -> {
            PreparedStatement st = s.prepared("DELETE FROM template_layer WHERE key = ?");
            st.setString(1, key);
            return st.executeUpdate() > 0;
        });
    }

    @Override
    public List<TemplateBuildStore.Layer> layersBeyond(int keep) {
        if (keep < 0) {
            throw new IllegalArgumentException("keep must be >= 0");
        }
        return db.read("list template layers", s -> {
            PreparedStatement st = s.prepared("SELECT key, snapshot_id FROM template_layer ORDER BY used_at DESC, key");
            List<TemplateBuildStore.Layer> beyond = new ArrayList<>();
            try (ResultSet rs = st.executeQuery()) {
                for (int row = 0; rs.next(); row++) {
                    if (row >= keep) {
                        beyond.add(new TemplateBuildStore.Layer(rs.getString(1), new TemplateId(rs.getString(2))));
                    }
                }
            }
            return beyond.reversed();
        });
    }

    // ---- logs --------------------------------------------------------------------------------------------------

    /**
     * Log lines are written without waiting for the disk ({@link Durability#WITH_NEXT_WRITE}): a build writes many, and
     * a crash fails the build anyway. A line's index is one more than the build's last; {@link #beforeAppend} runs
     * first in the same transaction.
     */
    @Override
    public void appendLog(String buildId, BuildLogLine line) {
        requireNonNull(buildId, "buildId is null");
        requireNonNull(line, "line is null");
        db.write("append build log", buildId, Durability.WITH_NEXT_WRITE, s -> {
            beforeAppend(s, buildId);
            PreparedStatement st =
                    s.prepared("INSERT INTO template_build_log (build_id, seq, at, level, message, step) "
                            + "VALUES (?, (SELECT COALESCE(MAX(seq), -1) + 1 FROM template_build_log WHERE build_id = ?), "
                            + "?, ?, ?, ?)");
            st.setString(1, buildId);
            st.setString(2, buildId);
            st.setLong(3, Codec.nanos(line.timestamp()));
            st.setString(4, line.level().name());
            st.setString(5, line.message());
            st.setString(6, line.step().orElse(null));
            st.executeUpdate();
            return null;
        });
    }

    /**
     * Runs in a log line's transaction before the line is written: where several connections may append to one build's
     * log at once, a store serializes them here (the next index is read from the lines already there). Does nothing
     * unless overridden.
     */
    protected void beforeAppend(PreparedStatements statements, String buildId) throws SQLException {}

    @Override
    public List<BuildLogLine> logs(String buildId, int offset, int limit) {
        requireNonNull(buildId, "buildId is null");
        if (offset < 0 || limit < 0) {
            throw new IllegalArgumentException("offset and limit must be >= 0");
        }
        return db.read("read build log", s -> {
            PreparedStatement st = s.prepared("SELECT at, level, message, step FROM template_build_log "
                    + "WHERE build_id = ? AND seq >= ? ORDER BY seq LIMIT ?");
            st.setString(1, buildId);
            st.setInt(2, offset);
            st.setInt(3, limit);
            return Rows.all(
                    st,
                    rs -> new BuildLogLine(
                            Codec.instant(rs.getLong("at")),
                            BuildLogLine.Level.valueOf(rs.getString("level")),
                            rs.getString("message"),
                            Optional.ofNullable(rs.getString("step"))));
        });
    }
}
