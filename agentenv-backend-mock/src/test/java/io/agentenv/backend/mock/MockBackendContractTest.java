package io.agentenv.backend.mock;

import io.agentenv.spi.SandboxBackendContract;
import io.agentenv.spi.SandboxBackendFactory;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;

/** The mock keeps the promises every real backend keeps. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class MockBackendContractTest extends SandboxBackendContract {
    private final MockBackendFactory factory = new MockBackendFactory();

    @Override
    protected SandboxBackendFactory factory() {
        return factory;
    }
}
