package io.agentenv.store.sqlite;

import io.agentenv.store.jdbc.JdbcVolumeStore;
import io.agentenv.volumes.VolumeStore;

/** {@link VolumeStore} in the sandbox store's database (the same connection, writer thread and durability). */
final class SqliteVolumeStore extends JdbcVolumeStore {
    SqliteVolumeStore(Database db) {
        super(db);
    }
}
