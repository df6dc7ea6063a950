package io.agentenv.store.sqlite;

import io.agentenv.orchestrator.TemplateBuildStore;
import io.agentenv.store.jdbc.JdbcTemplateBuildStore;
import java.util.Optional;

/**
 * {@link TemplateBuildStore} in the sandbox store's database (the same connection, writer thread and durability); its
 * builds are all this server's.
 */
final class SqliteTemplateBuildStore extends JdbcTemplateBuildStore {
    SqliteTemplateBuildStore(Database db) {
        super(db, Optional.empty());
    }
}
