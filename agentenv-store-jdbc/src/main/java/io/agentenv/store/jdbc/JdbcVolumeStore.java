package io.agentenv.store.jdbc;

import static java.util.Objects.requireNonNull;

import io.agentenv.orchestrator.SandboxStore.Durability;
import io.agentenv.volumes.VolumeRecord;
import io.agentenv.volumes.VolumeStore;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;

/** {@link VolumeStore} in standard SQL over the subclass's {@link Transactions}. */
public abstract class JdbcVolumeStore implements VolumeStore {
    private final Transactions db;

    protected JdbcVolumeStore(Transactions db) {
        this.db = requireNonNull(db, "db is null");
    }

    @Override
    public boolean insert(VolumeRecord volume) {
        requireNonNull(volume, "volume is null");
        return db.write("insert volume", volume.id(), Durability.NOW, s -> {
            PreparedStatement st = s.prepared("INSERT INTO volume (id, name, size_mib, created_at) VALUES (?, ?, ?, ?) "
                    + "ON CONFLICT DO NOTHING");
            st.setString(1, volume.id());
            st.setString(2, volume.name());
            st.setInt(3, volume.sizeMiB());
            st.setLong(4, Codec.nanos(volume.createdAt()));
            return st.executeUpdate() == 1;
        });
    }

    @Override
    public Optional<VolumeRecord> find(String id) {
        requireNonNull(id, "id is null");
        return db.read("find volume", id, s -> {
            PreparedStatement st = s.prepared("SELECT * FROM volume WHERE id = ?");
            st.setString(1, id);
            return Rows.first(st, rs -> volume(rs));
        });
    }

    @Override
    public List<VolumeRecord> list() {
        return db.read(
                "list volumes",
                s -> Rows.all(s.prepared("SELECT * FROM volume ORDER BY created_at DESC, id DESC"), rs -> volume(rs)));
    }

    @Override
    public boolean delete(String id) {
        requireNonNull(id, "id is null");
        return db.write("delete volume", id, Durability.NOW, s -> {
            PreparedStatement st = s.prepared("DELETE FROM volume WHERE id = ?");
            st.setString(1, id);
            return st.executeUpdate() == 1;
        });
    }

    private static VolumeRecord volume(ResultSet rs) throws SQLException {
        return new VolumeRecord(
                rs.getString("id"),
                rs.getString("name"),
                rs.getInt("size_mib"),
                Codec.instant(rs.getLong("created_at")));
    }
}
