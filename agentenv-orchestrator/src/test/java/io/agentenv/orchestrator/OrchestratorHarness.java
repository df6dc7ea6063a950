package io.agentenv.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.mock.MockBackendFactory;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.SandboxId;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;

/**
 * A real orchestrator on an in-memory store ({@link MemorySandboxStore}), a scriptable mock backend and a fake clock.
 * {@link #restart()} simulates a crash-restart: the orchestrator is abandoned without shutdown and a new one opens the
 * same store data and backend.
 */
final class OrchestratorHarness implements AutoCloseable {
    static final Instant T0 = Instant.parse("2026-03-01T10:00:00Z");
    static final Duration WAIT = Duration.ofSeconds(10);

    final Path dir;
    final MockBackendFactory backend;
    final FakeClock clock = new FakeClock(T0);
    final RecordingListener events = new RecordingListener();
    final UnaryOperator<SandboxStore> storeWrapper;
    final Duration transitionWait;
    final LifecycleHooks hooks;
    final FakeVolumeCatalog volumes = new FakeVolumeCatalog();
    SandboxStore store;
    private MemorySandboxStore data = new MemorySandboxStore();
    /** Where paused states and snapshots are also stored (a node of a cluster); empty for a lone server. */
    final Optional<SharedArtifacts> shared;

    private String artifactDirName = "artifacts";
    Orchestrator orchestrator;

    OrchestratorHarness(Path dir) {
        this(dir, new MockBackendFactory(), UnaryOperator.identity(), Duration.ofSeconds(10));
    }

    OrchestratorHarness(
            Path dir, MockBackendFactory backend, UnaryOperator<SandboxStore> storeWrapper, Duration transitionWait) {
        this(dir, backend, storeWrapper, transitionWait, LifecycleHooks.none());
    }

    /** A harness whose orchestrator also stores its paused states and snapshots in {@code shared}. */
    OrchestratorHarness(Path dir, SharedArtifacts shared) {
        this(
                dir,
                new MockBackendFactory(),
                UnaryOperator.identity(),
                Duration.ofSeconds(10),
                LifecycleHooks.none(),
                Optional.of(shared));
    }

    /** With a custom extension (the hooks tests pass real HTTP hooks against an in-process extension server). */
    OrchestratorHarness(Path dir, LifecycleHooks hooks) {
        this(dir, new MockBackendFactory(), UnaryOperator.identity(), Duration.ofSeconds(10), hooks);
    }

    OrchestratorHarness(
            Path dir,
            MockBackendFactory backend,
            UnaryOperator<SandboxStore> storeWrapper,
            Duration transitionWait,
            LifecycleHooks hooks) {
        this(dir, backend, storeWrapper, transitionWait, hooks, Optional.empty());
    }

    private OrchestratorHarness(
            Path dir,
            MockBackendFactory backend,
            UnaryOperator<SandboxStore> storeWrapper,
            Duration transitionWait,
            LifecycleHooks hooks,
            Optional<SharedArtifacts> shared) {
        this.shared = shared;
        this.hooks = hooks;
        this.dir = dir;
        this.backend = backend;
        this.storeWrapper = storeWrapper;
        this.transitionWait = transitionWait;
        open();
    }

    /** A harness whose store counts its reads ({@link FaultyStore}); {@code counting} gets the store, again after a restart. */
    static OrchestratorHarness countingReads(Path dir, AtomicReference<FaultyStore> counting) {
        return new OrchestratorHarness(
                dir,
                new MockBackendFactory(),
                store -> {
                    counting.set(new FaultyStore(store));
                    return counting.get();
                },
                Duration.ofSeconds(10));
    }

    private void open() {
        store = storeWrapper.apply(data);
        orchestrator = new Orchestrator(
                store,
                backend,
                id -> new AccessToken("token-" + id.value()),
                clock,
                new OrchestratorSettings(
                        artifactRoot(), Duration.ofSeconds(5), transitionWait, Duration.ofHours(1), 3, "user"),
                List.of(events),
                hooks,
                volumes,
                shared);
        orchestrator.start();
        for (Object monitor : orchestrator.internalMonitors()) {
            backend.forbidLock(monitor);
        }
    }

    Path artifactRoot() {
        return dir.resolve(artifactDirName);
    }

    /**
     * Like {@link #restart()}, with the artifacts under {@code artifactDir} instead: another node taking over the
     * records (only what is in the shared storage comes along).
     */
    void restartOnAnotherDisk(String artifactDir) {
        artifactDirName = artifactDir;
        restart();
    }

    /** Abandons the orchestrator as a crash would (no shutdown), closes the store, and starts a new one on its data. */
    void restart() {
        store.close();
        data = data.reopen();
        open();
    }

    SandboxId create() {
        return orchestrator
                .create(CreateSandbox.of("base", Duration.ofSeconds(300)))
                .id();
    }

    SandboxState state(SandboxId id) {
        return store.get(id).orElseThrow().state();
    }

    void assertNothingLeaked() {
        assertThat(backend.violations()).isEmpty();
    }

    @Override
    public void close() {
        orchestrator.shutdown();
        store.close();
        assertNothingLeaked();
    }
}
