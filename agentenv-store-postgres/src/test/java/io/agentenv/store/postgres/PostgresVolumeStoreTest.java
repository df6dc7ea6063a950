package io.agentenv.store.postgres;

import io.agentenv.volumes.VolumeStore;
import io.agentenv.volumes.VolumeStoreContract;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;

/** The volume store contract on PostgreSQL; a close and open is a new pool on the same database. */
class PostgresVolumeStoreTest extends VolumeStoreContract {
    private final ClusterPerDirectory clusters = new ClusterPerDirectory();

    @Override
    protected VolumeStore open(Path dir) {
        return new PostgresVolumeStore(clusters.of(dir).db());
    }

    @Override
    protected void close() {
        clusters.closeDatabase();
    }

    @AfterEach
    void dropDatabase() {
        clusters.close();
    }
}
