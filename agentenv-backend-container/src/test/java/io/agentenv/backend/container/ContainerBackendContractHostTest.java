package io.agentenv.backend.container;

import io.agentenv.spi.SandboxBackendContract;
import io.agentenv.spi.SandboxBackendFactory;
import org.junit.jupiter.api.Tag;

/** The SPI contract every backend owes the orchestrator, run against real container sandboxes. */
@Tag("host")
class ContainerBackendContractHostTest extends SandboxBackendContract {

    @SharedBackend
    private static BackendFixture backend;

    @Override
    protected SandboxBackendFactory factory() {
        return backend.factory;
    }
}
