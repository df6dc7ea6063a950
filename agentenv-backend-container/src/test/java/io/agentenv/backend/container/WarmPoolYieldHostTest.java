package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.SnapshotState;
import io.agentenv.spi.TemplateId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Warm members hold slots only while nobody needs them: a create that finds every slot taken gets a member's. */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class WarmPoolYieldHostTest {
    private static final TemplateId BASE = new TemplateId("base");
    private static final Duration READY = Duration.ofSeconds(60);

    private static void awaitReady(BackendFixture backend, int count) {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(90));
        while (backend.factory.warmPool().readyCount("base") < count) {
            assertThat(Instant.now()).as("%d warm members in time", count).isBefore(deadline);
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
        }
    }

    private static LaunchSpec spec(SandboxId id, TemplateId template) {
        return new LaunchSpec(id, template, Map.of(), "user", BackendFixture.token(id), NetworkPolicy.DEFAULT);
    }

    @Test
    void a_create_with_every_slot_held_by_warm_members_takes_one_of_theirs(@TempDir Path dir) throws Exception {
        try (BackendFixture backend = BackendFixture.createWithTokens(Map.of("pool_size", "2", "max_sandboxes", "2"))) {
            // both slots taken: a sandbox from a warm member, and the other member
            awaitReady(backend, 2);
            SandboxId sourceId = backend.factory.reserve(BASE).orElseThrow().id();
            SandboxBackend source = backend.factory.prepare(spec(sourceId, BASE), new LaunchSource.Template(BASE));
            try {
                source.start(READY);
                SnapshotState snapshot = source.snapshot(Files.createDirectories(dir.resolve("snapshot")));
                assertThat(backend.factory.warmPool().readyCount("base")).isEqualTo(1);

                // a create from the snapshot (not kept warm: nothing reserved one) needs a slot of its own
                SandboxId id = SandboxId.random(new SecureRandom());
                SandboxBackend sandbox = backend.factory.prepare(
                        spec(id, new TemplateId("snapyield0000000001")), new LaunchSource.Snapshot(snapshot));
                try {
                    sandbox.start(READY);

                    assertThat(backend.exec(id, "true")).isEmpty();
                    assertThat(backend.factory.warmPool().readyCount("base")).isZero();
                } finally {
                    sandbox.close();
                }
            } finally {
                source.close();
            }
        }
    }
}
