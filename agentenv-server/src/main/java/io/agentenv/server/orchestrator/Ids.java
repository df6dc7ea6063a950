package io.agentenv.server.orchestrator;

import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;

import java.security.SecureRandom;

/** New ids from one SecureRandom: sandboxes and snapshots get 20 lowercase alphanumerics, as E2B's do. */
final class Ids {
    private final SecureRandom random = new SecureRandom();

    SandboxId newSandboxId() {
        return SandboxId.random(random);
    }

    TemplateId newSnapshotId() {
        return new TemplateId(SandboxId.random(random).value());
    }

    String newGeneration() {
        return SandboxId.random(random).value();
    }
}
