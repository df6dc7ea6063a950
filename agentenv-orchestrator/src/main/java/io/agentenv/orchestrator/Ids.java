package io.agentenv.orchestrator;

import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.security.SecureRandom;
import java.util.UUID;

/** New ids from one SecureRandom: sandboxes and snapshots get 20 lowercase alphanumerics, as E2B's do. */
final class Ids {
    private final SecureRandom random = new SecureRandom();

    SandboxId newSandboxId() {
        return SandboxId.random(random);
    }

    TemplateId newSnapshotId() {
        return new TemplateId(SandboxId.random(random).value());
    }

    /** A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, version 7, 74 random bits; sorts by creation time. */
    UUID newInstanceId() {
        long millis = System.currentTimeMillis();
        long mostSignificant = (millis << 16) | 0x7000L | random.nextInt(1 << 12);
        long leastSignificant = (random.nextLong() & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
        return new UUID(mostSignificant, leastSignificant);
    }

    String newGeneration() {
        return SandboxId.random(random).value();
    }
}
