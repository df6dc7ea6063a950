package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.TemplateId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** A server killed with -9 and started again: what the container backend finds and does on this host. */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ContainerRestartHostTest {

    private static final Duration READY = Duration.ofSeconds(60);
    private static final TemplateId BASE = new TemplateId("base");
    private BackendFixture backend;

    @BeforeEach
    void setUp() throws Exception {
        backend = BackendFixture.create(Map.of());
    }

    @AfterEach
    void tearDown() throws Exception {
        backend.close();
    }

    private SandboxBackend fresh(LaunchSpec spec) throws Exception {
        SandboxBackend sandbox = backend.factory.prepare(spec, new LaunchSource.Template(BASE));
        sandbox.start(READY);
        return sandbox;
    }

    @Test
    void a_restarted_backend_reattaches_running_resumes_paused_and_reaps_the_rest() throws Exception {
        // given three sandboxes with a background process each; one is paused to disk, then the backend dies
        LaunchSpec kept = BackendFixture.baseSpec();
        LaunchSpec orphan = BackendFixture.baseSpec();
        LaunchSpec sleeping = BackendFixture.baseSpec();
        SandboxBackend keptBefore = fresh(kept);
        fresh(orphan);
        SandboxBackend toPause = fresh(sleeping);
        String keptSleeper = ContainerBackendHostTest.background(keptBefore, kept);
        String pausedSleeper = ContainerBackendHostTest.background(toPause, sleeping);
        Path dir = backend.workDir.resolve("artifacts-paused");
        byte[] pausedState = toPause.pause(PauseMode.WITH_MEMORY, dir).encode();
        toPause.close();
        // a backend killed with -9 takes the rest of that pause's release with it (the new one's reaper removes what
        // it held); this one lives on in the same JVM, so its release must not run alongside the new backend's reaper
        backend.factory.deferredReleases().awaitAll();

        // when a new backend starts on the same host and work dir, and the server claims only `kept`
        ContainerBackendFactory restarted = backend.restarted();
        List<SandboxBackend> opened = new ArrayList<>();
        try {
            Optional<SandboxBackend> reattached = restarted.reattach(kept);
            reattached.ifPresent(opened::add);
            Optional<SandboxBackend> unknown = restarted.reattach(BackendFixture.baseSpec());
            restarted.reapUnclaimed(Set.of(kept.id()));

            // then `kept` runs on with its process, the orphan is gone, and the paused one resumes with its process
            assertThat(reattached).isPresent();
            assertThat(unknown).isEmpty();
            assertThat(backend.factory.runc().state(backend.factory.names().containerId(orphan.id())))
                    .isEmpty();
            assertThat(backend.factory
                            .cgroups()
                            .pathsOf(backend.factory
                                    .names()
                                    .containerId(orphan.id())
                                    .value()))
                    .isEmpty();
            assertThat(Files.exists(backend.factory
                            .names()
                            .dirs(backend.factory.names().containerId(orphan.id()))
                            .dir()))
                    .isFalse();
            assertThat(backend.exec(kept.id(), "cat", "/proc/" + keptSleeper + "/comm"))
                    .isEqualTo("sleep");
            reattached.get().envd().orElseThrow().health();
            SandboxBackend resumed =
                    restarted.prepare(sleeping, new LaunchSource.Paused(restarted.decodePausedState(pausedState, dir)));
            opened.add(resumed);
            resumed.start(READY);
            assertThat(backend.exec(sleeping.id(), "cat", "/proc/" + pausedSleeper + "/comm"))
                    .isEqualTo("sleep");
        } finally {
            for (SandboxBackend sandbox : opened) {
                sandbox.close();
            }
            restarted.shutdown();
            FileTrees.deleteTree(dir);
        }
        // and the fixture's leak check (on close) finds nothing of any of them
        backend.assertNothingLeaked();
    }
}
