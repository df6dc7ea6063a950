package io.agentenv.store.sqlite;

import io.agentenv.volumes.VolumeStore;
import io.agentenv.volumes.VolumeStoreContract;
import java.nio.file.Path;

/** The volume store contract on SQLite. */
class SqliteVolumeStoreTest extends VolumeStoreContract {
    private SqliteSandboxStore sqlite;

    @Override
    protected VolumeStore open(Path dir) {
        sqlite = SqliteSandboxStore.open(dir.resolve("agentenv.db"));
        return sqlite.volumes();
    }

    @Override
    protected void close() {
        sqlite.close();
    }
}
