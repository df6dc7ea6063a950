package io.agentenv.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.mock.Gate;
import io.agentenv.backend.mock.MockBackendFactory;
import io.agentenv.backend.mock.MockOp;
import io.agentenv.spi.GuestEndpoint;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Orchestrator#route}: the sandbox proxy's per-request lookup, served from memory and never stale. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class OrchestratorRouteTest {
    private static final GuestEndpoint FIRST = new GuestEndpoint("10.11.0.2", 49983, Optional.empty());
    private static final GuestEndpoint SECOND = new GuestEndpoint("10.11.0.6", 49983, Optional.empty());

    @TempDir
    Path dir;

    private OrchestratorHarness h;
    private FaultyStore store;
    private Orchestrator orchestrator;

    @BeforeEach
    void open() {
        h = new OrchestratorHarness(
                dir, new MockBackendFactory(), s -> store = new FaultyStore(s), Duration.ofSeconds(10));
        h.backend.guestEndpoint(FIRST);
        orchestrator = h.orchestrator;
    }

    @AfterEach
    void close() {
        h.close();
    }

    @Test
    void after_the_first_lookup_a_running_sandboxs_route_is_read_from_memory() {
        SandboxId id = h.create();
        orchestrator.route(id);
        int reads = store.recordReads();

        for (int i = 0; i < 100; i++) {
            GuestRoute route = orchestrator.route(id);
            assertThat(route.state()).isEqualTo(SandboxState.RUNNING);
            assertThat(route.endpoint()).contains(FIRST);
        }

        assertThat(store.recordReads()).isEqualTo(reads);
    }

    @Test
    void the_route_carries_the_access_rules_fixed_at_create() {
        NetworkPolicy tokenRequired = new NetworkPolicy(
                NetworkPolicy.InternetAccess.DEFAULT, List.of(), List.of(), NetworkPolicy.PublicTraffic.TOKEN_REQUIRED);
        SandboxId id = orchestrator
                .create(new CreateSandbox(
                        "base",
                        Duration.ofSeconds(60),
                        TimeoutAction.PAUSE,
                        PauseMode.WITH_MEMORY,
                        true,
                        Map.of(),
                        Map.of(),
                        tokenRequired,
                        "{}",
                        true,
                        Optional.empty(),
                        List.of()))
                .id();

        GuestRoute route = orchestrator.route(id);

        assertThat(route.secure()).isTrue();
        assertThat(route.autoResume()).isTrue();
        assertThat(route.publicTraffic()).isEqualTo(NetworkPolicy.PublicTraffic.TOKEN_REQUIRED);
    }

    @Test
    void pause_resume_and_kill_are_seen_by_the_very_next_lookup() {
        SandboxId id = h.create();
        assertThat(orchestrator.route(id).endpoint()).contains(FIRST);

        orchestrator.pause(id, PauseMode.WITH_MEMORY);
        GuestRoute paused = orchestrator.route(id);
        assertThat(paused.state()).isEqualTo(SandboxState.PAUSED);
        assertThat(paused.endpoint()).isEmpty();

        h.backend.guestEndpoint(SECOND); // the resumed instance is reached elsewhere
        orchestrator.connect(id, Duration.ofSeconds(60));
        assertThat(orchestrator.route(id).endpoint()).contains(SECOND);

        orchestrator.kill(id);
        assertThatThrownBy(() -> orchestrator.route(id))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.NOT_FOUND));
        assertThat(store.get(id)).isEmpty();
    }

    @Test
    void fork_children_are_routed_and_the_source_keeps_its_route() {
        SandboxId source = h.create();
        orchestrator.route(source);

        List<ForkResult> children = orchestrator.fork(source, 2, Optional.empty());

        assertThat(orchestrator.route(source).state()).isEqualTo(SandboxState.RUNNING);
        assertThat(children).allSatisfy(child -> {
            SandboxId childId = ((ForkResult.Child) child).sandbox().id();
            assertThat(orchestrator.route(childId).endpoint()).contains(FIRST);
        });
    }

    @Test
    void a_lookup_during_a_transition_sees_the_transitional_state_without_an_endpoint() throws Exception {
        SandboxId id = h.create();
        orchestrator.route(id);
        Gate capture = h.backend.holdNext(MockOp.SNAPSHOT);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<SnapshotView> snapshot = threads.submit(() -> orchestrator.snapshot(id, Optional.empty()));
            capture.awaitEntered(Duration.ofSeconds(10));

            GuestRoute during = orchestrator.route(id);
            assertThat(during.state()).isEqualTo(SandboxState.SNAPSHOTTING);
            assertThat(during.endpoint()).isEmpty();

            capture.release();
            snapshot.get(10, TimeUnit.SECONDS);
            assertThat(orchestrator.route(id).endpoint()).contains(FIRST);
        }
    }

    @Test
    @SuppressWarnings("ThreadPriorityCheck") // busy readers yield so the transitions they race get the cores
    void lookups_racing_transitions_never_keep_a_state_older_than_a_returned_transition() throws Exception {
        SandboxId id = h.create();
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> readerFailure = new AtomicReference<>();
        // platform threads: busy readers on virtual threads would hold the carriers the orchestrator's operations need
        try (ExecutorService threads =
                Executors.newThreadPerTaskExecutor(Thread.ofPlatform().factory())) {
            for (int r = 0; r < 2; r++) {
                threads.submit(() -> {
                    try {
                        while (!done.get()) {
                            orchestrator.route(id); // fills the cache while the record changes underneath
                            Thread.yield();
                        }
                    } catch (RuntimeException | Error e) {
                        readerFailure.set(e);
                    }
                });
            }
            try {
                for (int i = 0; i < 30; i++) {
                    orchestrator.pause(id, PauseMode.WITH_MEMORY);
                    assertThat(orchestrator.route(id).state())
                            .as("after pause %d", i)
                            .isEqualTo(SandboxState.PAUSED);
                    orchestrator.connect(id, Duration.ofSeconds(60));
                    GuestRoute resumed = orchestrator.route(id);
                    assertThat(resumed.state()).as("after resume %d", i).isEqualTo(SandboxState.RUNNING);
                    assertThat(resumed.endpoint()).as("after resume %d", i).contains(FIRST);
                }
            } finally {
                done.set(true);
            }
        }
        assertThat(readerFailure.get()).isNull();
        orchestrator.kill(id);
        assertThatThrownBy(() -> orchestrator.route(id)).isInstanceOf(AgentEnvException.class);
    }

    @Test
    void a_lookup_that_read_the_record_before_a_pause_does_not_keep_what_it_read() throws Exception {
        SandboxId id = h.create();
        java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            store.holdNextGet(entered, release);
            Future<GuestRoute> reader = threads.submit(() -> orchestrator.route(id)); // reads RUNNING, then waits
            assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();

            orchestrator.pause(id, PauseMode.WITH_MEMORY);
            release.countDown();

            assertThat(reader.get(10, TimeUnit.SECONDS).state()).isEqualTo(SandboxState.RUNNING); // what it read
            assertThat(orchestrator.route(id).state()).as("the next lookup").isEqualTo(SandboxState.PAUSED);
        }
    }

    @Test
    void an_unknown_sandbox_is_not_found_and_is_not_kept() {
        SandboxId unknown = new SandboxId("zzzzzzzzzzzzzzzzzzzz");
        assertThatThrownBy(() -> orchestrator.route(unknown))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.NOT_FOUND));
        assertThat(orchestrator.records().cachedCount()).isZero();
    }
}
