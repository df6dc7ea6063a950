package io.agentenv.backend.container;

import io.agentenv.spi.SandboxBackendContract;
import io.agentenv.spi.SandboxBackendFactory;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The SPI contract every backend owes the orchestrator, run against real container sandboxes. */
@Tag("host")
class ContainerBackendContractHostTest extends SandboxBackendContract {

    private static BackendFixture backend;

    @BeforeAll
    static void startBackend() throws Exception {
        backend = BackendFixture.create(Map.of());
    }

    @AfterAll
    static void stopBackend() throws Exception {
        if (backend != null) {
            backend.close();
        }
    }

    @Override
    protected SandboxBackendFactory factory() {
        return backend.factory;
    }

    /** Runs after the contract's own @AfterEach closed every instance. */
    @RegisterExtension
    static final AfterEachCallback NOTHING_IS_LEFT_BEHIND = context -> backend.assertNothingLeaked();
}
