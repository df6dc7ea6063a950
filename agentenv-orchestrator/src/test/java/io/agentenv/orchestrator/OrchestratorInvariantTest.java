package io.agentenv.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.mock.MockSandbox;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Many clients hammer a few sandboxes with every operation at once. Whatever the interleaving, afterwards every
 * record is stable, the live instances are exactly the running sandboxes, paused ones still have their artifacts, and
 * no client saw anything but success, NOT_FOUND or the documented CONFLICTs.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
@ExtendWith(OrchestratorExtension.class)
class OrchestratorInvariantTest {
    OrchestratorHarness h;

    @BeforeEach
    void setUp(OrchestratorHarness harness) {
        h = harness;
    }

    @Test
    void concurrent_random_operations_leave_a_consistent_state() throws Exception {
        // given
        Orchestrator orchestrator = h.orchestrator;
        List<SandboxId> ids = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 4; i++) {
            ids.add(h.create());
        }
        List<Throwable> unexpected = new CopyOnWriteArrayList<>();
        // when
        try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> runs = new ArrayList<>();
            for (int client = 0; client < 8; client++) {
                Random random = new Random(client);
                runs.add(clients.submit(() -> {
                    for (int step = 0; step < 40; step++) {
                        SandboxId id = ids.get(random.nextInt(ids.size()));
                        try {
                            switch (random.nextInt(9)) {
                                case 0 -> orchestrator.pause(id, PauseMode.WITH_MEMORY);
                                case 1 -> orchestrator.connect(id, Duration.ofSeconds(60));
                                case 2 -> orchestrator.kill(id);
                                case 3 ->
                                    orchestrator.fork(id, 1, Optional.empty()).forEach(r -> {
                                        if (r instanceof ForkResult.Child c) {
                                            ids.add(c.sandbox().id());
                                        }
                                    });
                                case 4 -> orchestrator.snapshot(id, Optional.empty());
                                case 5 -> orchestrator.setTimeout(id, Duration.ofSeconds(30));
                                case 6 -> orchestrator.resume(id, Duration.ofSeconds(30));
                                case 7 -> orchestrator.get(id);
                                default -> ids.add(h.create());
                            }
                        } catch (AgentEnvException e) {
                            boolean allowed = e.kind() == ErrorKind.NOT_FOUND || e.kind() == ErrorKind.CONFLICT;
                            if (!allowed) {
                                unexpected.add(e);
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> run : runs) {
                run.get(60, TimeUnit.SECONDS);
            }
        }
        // then
        assertThat(unexpected).isEmpty();
        List<SandboxRecord> records = h.store.all();
        assertThat(records).allSatisfy(r -> assertThat(r.state()).isIn(SandboxState.RUNNING, SandboxState.PAUSED));
        Set<SandboxId> running = records.stream()
                .filter(r -> r.state() == SandboxState.RUNNING)
                .map(SandboxRecord::id)
                .collect(Collectors.toSet());
        Set<SandboxId> live =
                h.backend.openInstances().stream().map(s -> s.spec().id()).collect(Collectors.toSet());
        assertThat(live).isEqualTo(running);
        assertThat(h.backend.openInstances())
                .allSatisfy(s -> assertThat(s.status()).isEqualTo(MockSandbox.Status.RUNNING));
        for (SandboxRecord record : records) {
            if (record.state() == SandboxState.PAUSED) {
                assertThat(record.paused()).isPresent();
                assertThat(Files.isDirectory(record.paused().get().artifactDir()))
                        .isTrue();
            } else {
                assertThat(record.paused()).isEmpty();
            }
        }
        assertThat(h.artifactRoot().resolve("forks"))
                .satisfiesAnyOf(
                        forks -> assertThat(forks).doesNotExist(),
                        forks -> assertThat(forks).isEmptyDirectory());
        h.assertNothingLeaked();
    }
}
