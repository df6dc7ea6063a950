package io.agentenv.orchestrator;

import java.nio.file.Path;

/** The in-memory store the orchestrator's tests run on keeps the same contract as the SQLite store. */
class MemorySandboxStoreTest extends SandboxStoreContract {
    private MemorySandboxStore opened;

    @Override
    protected SandboxStore open(Path dir) {
        opened = opened == null ? new MemorySandboxStore() : opened.reopen();
        return opened;
    }
}
