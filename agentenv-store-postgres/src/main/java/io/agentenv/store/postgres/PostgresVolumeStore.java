package io.agentenv.store.postgres;

import io.agentenv.store.jdbc.JdbcVolumeStore;
import io.agentenv.volumes.VolumeStore;

/** {@link VolumeStore} in the cluster's database: one registry of volumes that every node and gateway shares. */
public final class PostgresVolumeStore extends JdbcVolumeStore {
    public PostgresVolumeStore(PostgresDatabase db) {
        super(db);
    }
}
