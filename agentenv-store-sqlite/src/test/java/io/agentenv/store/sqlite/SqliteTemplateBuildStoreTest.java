package io.agentenv.store.sqlite;

import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.TemplateBuildStore;
import io.agentenv.orchestrator.TemplateBuildStoreContract;
import java.nio.file.Path;

/** The template build store contract on SQLite. */
class SqliteTemplateBuildStoreTest extends TemplateBuildStoreContract {
    @Override
    protected SandboxStore open(Path dir) {
        return SqliteSandboxStore.open(dir.resolve("agentenv.db"));
    }

    @Override
    protected TemplateBuildStore templateBuilds(SandboxStore sandboxes) {
        return ((SqliteSandboxStore) sandboxes).templateBuilds();
    }
}
