package io.agentenv.orchestrator;

import static io.agentenv.orchestrator.OrchestratorHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.mock.FakeEnvd;
import io.agentenv.backend.mock.Gate;
import io.agentenv.backend.mock.MockOp;
import io.agentenv.backend.mock.MockSandbox;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.EnvdMetrics;
import io.agentenv.spi.GuestCommand;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** runningEnvd, the metrics sampler and logs over the mock backend's FakeEnvd. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SandboxGuestsTest {
    @TempDir
    Path dir;

    OrchestratorHarness h;
    SandboxGuests guests;
    final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

    @AfterEach
    void tearDown() {
        threads.shutdownNow();
        if (guests != null) {
            guests.close();
        }
        if (h != null) {
            h.close();
        }
    }

    private Orchestrator start(GuestSettings settings) {
        h = new OrchestratorHarness(dir);
        guests = new SandboxGuests(h.orchestrator, settings, h.clock);
        return h.orchestrator;
    }

    private Orchestrator start() {
        return start(GuestSettings.defaults());
    }

    private MockSandbox live(SandboxId id) {
        return h.backend.instance(id).orElseThrow();
    }

    private static AgentEnvException agentError(Throwable thrown) {
        return (AgentEnvException) thrown;
    }

    // ---- runningEnvd --------------------------------------------------------------------------------------------

    @Test
    void running_envd_is_the_live_instances_guest_with_its_generation() {
        start();
        SandboxId id = h.create();
        RunningEnvd guest = guests.runningEnvd(id);
        assertThat(guest.envd()).isSameAs(live(id).fakeEnvd());
        assertThat(guest.id()).isEqualTo(id);
    }

    @Test
    void running_envd_of_an_unknown_sandbox_is_not_found() {
        start();
        assertThatThrownBy(() -> guests.runningEnvd(new SandboxId("x".repeat(SandboxId.LENGTH))))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.NOT_FOUND));
    }

    @Test
    void running_envd_during_a_transition_is_a_conflict_to_retry() throws Exception {
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        Gate gate = h.backend.holdNext(MockOp.PAUSE);
        Future<PauseOutcome> pause = threads.submit(() -> orchestrator.pause(id, PauseMode.WITH_MEMORY));
        gate.awaitEntered(WAIT);

        assertThatThrownBy(() -> guests.runningEnvd(id)).isInstanceOfSatisfying(AgentEnvException.class, e -> {
            assertThat(e.kind()).isEqualTo(ErrorKind.CONFLICT);
            assertThat(e.getMessage()).isEqualTo("sandbox runtime is transitioning; retry");
        });
        gate.release();
        pause.get(10, TimeUnit.SECONDS);
        assertThatThrownBy(() -> guests.runningEnvd(id)).isInstanceOfSatisfying(AgentEnvException.class, e -> {
            assertThat(e.kind()).isEqualTo(ErrorKind.CONFLICT);
            assertThat(e.getMessage()).contains("is paused");
        });
    }

    @Test
    void running_envd_without_a_connected_guest_agent_is_an_upstream_failure() {
        start();
        SandboxId id = h.create();
        live(id).disconnectGuest();
        assertThatThrownBy(() -> guests.runningEnvd(id)).isInstanceOfSatisfying(AgentEnvException.class, e -> {
            assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_FAILED);
            assertThat(e.getMessage()).isEqualTo("sandbox guest agent is not connected");
        });
    }

    @Test
    void a_blocked_guest_call_holds_no_lock_so_pause_list_create_and_kill_proceed() throws Exception {
        Orchestrator orchestrator = start();
        SandboxId held = h.create();
        SandboxId other = h.create();
        Gate gate = live(held).fakeEnvd().holdNext(FakeEnvd.Call.LOGS);
        Future<List<EnvdLogEntry>> logs = threads.submit(() -> guests.logs(held, query(LogQuery.Direction.FORWARD)));
        gate.awaitEntered(WAIT);

        // while the guest call is blocked: lifecycle operations on the same and other sandboxes complete
        assertThat(orchestrator.pause(held, PauseMode.WITH_MEMORY)).isEqualTo(PauseOutcome.PAUSED);
        assertThat(orchestrator.list(SandboxQuery.all(100)).items()).hasSize(2);
        SandboxId created = h.create();
        orchestrator.kill(other);
        orchestrator.kill(held);
        assertThat(orchestrator.list(SandboxQuery.all(100)).items())
                .extracting(SandboxView::id)
                .containsExactly(created);
        assertThat(logs).isNotDone();

        gate.release();
        assertThat(logs.get(10, TimeUnit.SECONDS)).isEmpty(); // the answer was already in flight
        assertThat(h.backend.violations()).isEmpty();
    }

    @Test
    void a_guest_call_that_fails_is_an_upstream_failure() {
        start();
        SandboxId id = h.create();
        live(id).fakeEnvd().failNext(FakeEnvd.Call.LOGS, new EnvdException.Rejected(500, "journal broken"));
        assertThatThrownBy(() -> guests.logs(id, query(LogQuery.Direction.FORWARD)))
                .isInstanceOfSatisfying(AgentEnvException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_FAILED);
                    assertThat(e.getMessage()).isEqualTo("sandbox guest agent refused the request");
                });
    }

    // ---- run ----------------------------------------------------------------------------------------------------

    @Test
    void run_passes_the_command_to_envd_and_returns_its_exit_and_output() {
        start();
        SandboxId id = h.create();
        live(id).fakeEnvd().commands((command, output) -> {
            output.stdout(("ran " + command.args().getLast()).getBytes(StandardCharsets.UTF_8));
            output.stderr(new byte[] {'!'});
            return new GuestCommand.Exit(2, true, "exit status 2");
        });
        GuestCommand command =
                GuestCommand.shell("make all", Optional.of("root"), Map.of("A", "1"), Optional.of("/src"));
        StringBuilder out = new StringBuilder();
        StringBuilder err = new StringBuilder();

        GuestCommand.Exit exit = guests.run(id, command, new GuestCommand.Output() {
            @Override
            public void stdout(byte[] chunk) {
                out.append(new String(chunk, StandardCharsets.UTF_8));
            }

            @Override
            public void stderr(byte[] chunk) {
                err.append(new String(chunk, StandardCharsets.UTF_8));
            }
        });

        assertThat(exit).isEqualTo(new GuestCommand.Exit(2, true, "exit status 2"));
        assertThat(out).hasToString("ran make all");
        assertThat(err).hasToString("!");
        assertThat(live(id).fakeEnvd().ran()).containsExactly(command);
    }

    @Test
    void a_command_envd_refuses_is_an_upstream_failure_with_envd_s_reason() {
        start();
        SandboxId id = h.create();
        live(id).fakeEnvd().failNext(FakeEnvd.Call.RUN, new EnvdException.Rejected(400, "user 'nobody2' not found"));
        GuestCommand command = GuestCommand.shell("true", Optional.of("nobody2"), Map.of(), Optional.empty());
        assertThatThrownBy(() -> guests.run(id, command, new GuestCommand.Output() {
                    @Override
                    public void stdout(byte[] chunk) {}

                    @Override
                    public void stderr(byte[] chunk) {}
                }))
                .isInstanceOfSatisfying(AgentEnvException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.UPSTREAM_FAILED);
                    assertThat(e.getMessage()).isEqualTo("user 'nobody2' not found");
                });
    }

    // ---- sampler ------------------------------------------------------------------------------------------------

    @Test
    void a_round_samples_every_running_sandbox_and_skips_paused_ones() {
        Orchestrator orchestrator = start();
        SandboxId a = h.create();
        SandboxId b = h.create();
        orchestrator.pause(b, PauseMode.WITH_MEMORY);

        MetricsSampler.Round round = guests.sampleAll(h.clock.instant());

        assertThat(round.outcomes())
                .containsEntry(a, MetricsSampler.Outcome.SAMPLED)
                .doesNotContainKey(b);
        assertThat(guests.history().size(a)).isEqualTo(1);
        assertThat(guests.history().size(b)).isZero();
    }

    @Test
    void a_sandbox_busy_with_a_lifecycle_call_is_skipped_not_waited_on() throws Exception {
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        Gate gate = h.backend.holdNext(MockOp.LIVENESS); // holds the instance's lock while the sandbox stays RUNNING
        Future<?> check = threads.submit(orchestrator::checkLiveness);
        gate.awaitEntered(WAIT);

        MetricsSampler.Round round = guests.sampleAll(h.clock.instant());

        assertThat(round.outcomes()).containsEntry(id, MetricsSampler.Outcome.BUSY);
        assertThat(live(id).fakeEnvd().count(FakeEnvd.Call.METRICS)).isZero();
        gate.release();
        check.get(10, TimeUnit.SECONDS);
    }

    @Test
    void a_sandbox_being_paused_is_skipped_not_waited_on() throws Exception {
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        Gate gate = h.backend.holdNext(MockOp.PAUSE);
        Future<PauseOutcome> pause = threads.submit(() -> orchestrator.pause(id, PauseMode.WITH_MEMORY));
        gate.awaitEntered(WAIT);
        try {
            MetricsSampler.Round round = guests.sampleAll(h.clock.instant());

            assertThat(round.outcomes()).containsEntry(id, MetricsSampler.Outcome.NOT_RUNNING);
            assertThat(live(id).fakeEnvd().count(FakeEnvd.Call.METRICS)).isZero();
        } finally {
            gate.release();
        }
        pause.get(10, TimeUnit.SECONDS);
    }

    @Test
    void a_sample_from_a_runtime_that_was_paused_and_resumed_meanwhile_is_dropped() throws Exception {
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        MockSandbox first = live(id);
        Gate gate = first.fakeEnvd().holdNext(FakeEnvd.Call.METRICS);
        Future<MetricsSampler.Round> round = threads.submit(() -> guests.sampleAll(h.clock.instant()));
        gate.awaitEntered(WAIT);

        orchestrator.pause(id, PauseMode.WITH_MEMORY);
        orchestrator.connect(id, Duration.ofMinutes(5));
        assertThat(live(id)).isNotSameAs(first);
        gate.release();

        assertThat(round.get(10, TimeUnit.SECONDS).outcomes()).containsEntry(id, MetricsSampler.Outcome.STALE);
        assertThat(guests.history().size(id)).isZero();

        h.clock.advance(Duration.ofSeconds(5));
        assertThat(guests.sampleAll(h.clock.instant()).outcomes()).containsEntry(id, MetricsSampler.Outcome.SAMPLED);
        assertThat(live(id).fakeEnvd().count(FakeEnvd.Call.METRICS)).isEqualTo(1);
        assertThat(guests.history().size(id)).isEqualTo(1);
    }

    @Test
    void a_sample_taken_across_a_fork_is_kept_and_the_child_is_sampled_on_its_own() throws Exception {
        Orchestrator orchestrator = start();
        SandboxId source = h.create();
        Gate gate = live(source).fakeEnvd().holdNext(FakeEnvd.Call.METRICS);
        Future<MetricsSampler.Round> round = threads.submit(() -> guests.sampleAll(h.clock.instant()));
        gate.awaitEntered(WAIT);

        List<ForkResult> children = orchestrator.fork(source, 1, Optional.empty());
        SandboxId child = ((ForkResult.Child) children.getFirst()).sandbox().id();
        gate.release();

        assertThat(round.get(10, TimeUnit.SECONDS).outcomes()).containsEntry(source, MetricsSampler.Outcome.SAMPLED);
        h.clock.advance(Duration.ofSeconds(5));
        MetricsSampler.Round next = guests.sampleAll(h.clock.instant());
        assertThat(next.outcomes()).containsEntry(child, MetricsSampler.Outcome.SAMPLED);
        assertThat(live(child).fakeEnvd()).isNotSameAs(live(source).fakeEnvd());
        assertThat(live(child).fakeEnvd().count(FakeEnvd.Call.METRICS)).isEqualTo(1);
        assertThat(guests.history().size(source)).isEqualTo(2);
        assertThat(guests.history().size(child)).isEqualTo(1);
    }

    @Test
    void a_backend_without_a_host_reading_is_sampled_through_its_envd() {
        start();
        SandboxId id = h.create();

        assertThat(guests.sampleAll(h.clock.instant()).outcomes()).containsEntry(id, MetricsSampler.Outcome.SAMPLED);

        assertThat(live(id).hostMetricsReads()).isEqualTo(1);
        assertThat(live(id).fakeEnvd().count(FakeEnvd.Call.METRICS)).isEqualTo(1);
    }

    @Test
    void a_reading_the_backend_takes_from_the_host_is_kept_without_calling_envd() {
        start();
        SandboxId id = h.create();
        live(id).hostMetrics(() -> Optional.of(reading(Instant.ofEpochSecond(3_000))));

        assertThat(guests.sampleAll(h.clock.instant()).outcomes()).containsEntry(id, MetricsSampler.Outcome.SAMPLED);

        assertThat(live(id).fakeEnvd().count(FakeEnvd.Call.METRICS)).isZero();
        assertThat(guests.metrics(id, Optional.empty(), Optional.empty()))
                .extracting(EnvdMetrics::timestamp)
                .containsExactly(Instant.ofEpochSecond(3_000));
    }

    @Test
    void a_failed_host_reading_drops_the_sample_without_asking_envd_next_round_retries() {
        start();
        SandboxId id = h.create();
        live(id).hostMetrics(() -> {
            throw new BackendException.Recoverable("cgroup unreadable");
        });

        assertThat(guests.sampleAll(h.clock.instant()).outcomes()).containsEntry(id, MetricsSampler.Outcome.FAILED);
        assertThat(live(id).fakeEnvd().count(FakeEnvd.Call.METRICS)).isZero();
        assertThat(guests.history().size(id)).isZero();

        live(id).hostMetrics(() -> Optional.of(reading(Instant.ofEpochSecond(3_001))));
        assertThat(guests.sampleAll(h.clock.instant()).outcomes()).containsEntry(id, MetricsSampler.Outcome.SAMPLED);
        assertThat(guests.history().size(id)).isEqualTo(1);
    }

    @Test
    void a_sandbox_busy_with_a_lifecycle_call_is_not_read_from_the_host_either() throws Exception {
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        MockSandbox instance = live(id);
        instance.hostMetrics(() -> Optional.of(reading(Instant.ofEpochSecond(3_002))));
        Gate gate = h.backend.holdNext(MockOp.LIVENESS);
        Future<?> check = threads.submit(orchestrator::checkLiveness);
        gate.awaitEntered(WAIT);
        try {
            assertThat(guests.sampleAll(h.clock.instant()).outcomes()).containsEntry(id, MetricsSampler.Outcome.BUSY);

            assertThat(instance.hostMetricsReads()).isZero();
        } finally {
            gate.release();
        }
        check.get(10, TimeUnit.SECONDS);
        assertThat(guests.history().size(id)).isZero();
    }

    @Test
    void liveness_and_sampling_rounds_between_two_writes_share_one_read_of_running_ids(@TempDir Path other) {
        // given: three running sandboxes on a store that counts reads
        AtomicReference<FaultyStore> counting = new AtomicReference<>();
        OrchestratorHarness few = OrchestratorHarness.countingReads(other, counting);
        SandboxGuests sampled = new SandboxGuests(few.orchestrator, GuestSettings.defaults(), few.clock);
        try {
            List<SandboxId> ids = List.of(few.create(), few.create(), few.create());
            counting.get().resetReads();

            // when: two rounds of each, no write in between
            assertThat(few.orchestrator.checkLiveness()).isPresent();
            sampled.sampleAll(few.clock.instant());
            few.clock.advance(Duration.ofSeconds(5));
            assertThat(few.orchestrator.checkLiveness()).isPresent();
            sampled.sampleAll(few.clock.instant());

            // then
            assertThat(counting.get().idSetReads()).isEqualTo(1);

            // and a write (a kill) makes the next round read again, without the killed sandbox
            few.orchestrator.kill(ids.getFirst());
            counting.get().resetReads();
            assertThat(few.orchestrator.checkLiveness().orElseThrow().outcomes())
                    .containsOnlyKeys(ids.get(1), ids.get(2));
            assertThat(sampled.sampleAll(few.clock.instant()).outcomes()).doesNotContainKey(ids.getFirst());
            assertThat(counting.get().idSetReads()).isEqualTo(1);
        } finally {
            sampled.close();
            few.close();
        }
    }

    @Test
    void a_round_of_host_readings_over_many_sandboxes_reads_the_store_once(@TempDir Path other) {
        // given: 40 running sandboxes with host readings (and one paused, with a history) on a store that counts reads
        AtomicReference<FaultyStore> counting = new AtomicReference<>();
        OrchestratorHarness many = OrchestratorHarness.countingReads(other, counting);
        SandboxGuests sampled = new SandboxGuests(many.orchestrator, GuestSettings.defaults(), many.clock);
        try {
            List<SandboxId> ids = new ArrayList<>();
            for (int i = 0; i < 41; i++) {
                SandboxId id = many.create();
                many.backend
                        .instance(id)
                        .orElseThrow()
                        .hostMetrics(() -> Optional.of(reading(Instant.ofEpochSecond(4_000))));
                ids.add(id);
            }
            assertThat(sampled.sampleAll(many.clock.instant()).count(MetricsSampler.Outcome.SAMPLED))
                    .isEqualTo(41);
            many.orchestrator.pause(ids.getLast(), PauseMode.WITH_MEMORY);
            many.clock.advance(Duration.ofSeconds(5));
            counting.get().resetReads();

            // when
            MetricsSampler.Round round = sampled.sampleAll(many.clock.instant());

            // then: one read of the RUNNING ids; only the paused sandbox's record is read (is its history still
            // needed?)
            assertThat(round.outcomes())
                    .hasSize(40)
                    .doesNotContainKey(ids.getLast())
                    .allSatisfy((id, outcome) -> assertThat(outcome).isEqualTo(MetricsSampler.Outcome.SAMPLED));
            assertThat(counting.get().idSetReads()).isEqualTo(1);
            assertThat(counting.get().recordReads()).isEqualTo(1);
            assertThat(sampled.history().size(ids.getFirst())).isEqualTo(2);
            assertThat(sampled.history().size(ids.getLast())).isEqualTo(1);
        } finally {
            sampled.close();
            many.close();
        }
    }

    @Test
    void a_sandbox_sampled_less_than_half_an_interval_ago_is_not_sampled_again() {
        start();
        SandboxId id = h.create();
        guests.sampleAll(h.clock.instant());
        h.clock.advance(Duration.ofSeconds(1));
        assertThat(guests.sampleAll(h.clock.instant()).outcomes()).containsEntry(id, MetricsSampler.Outcome.FRESH);
        h.clock.advance(Duration.ofSeconds(4));
        assertThat(guests.sampleAll(h.clock.instant()).outcomes()).containsEntry(id, MetricsSampler.Outcome.SAMPLED);
    }

    @Test
    void the_history_is_bounded_and_removed_when_the_sandbox_is_killed() throws Exception {
        Orchestrator orchestrator = start(new GuestSettings(Duration.ofSeconds(5), 3, 64));
        SandboxId id = h.create();
        for (int i = 0; i < 5; i++) {
            int second = i;
            live(id).fakeEnvd().metrics(clock -> reading(Instant.ofEpochSecond(1_000 + second)));
            guests.sampleAll(h.clock.instant());
            h.clock.advance(Duration.ofSeconds(5));
        }
        assertThat(guests.metrics(id, Optional.empty(), Optional.empty()))
                .extracting(EnvdMetrics::timestamp)
                .containsExactly(
                        Instant.ofEpochSecond(1_002), Instant.ofEpochSecond(1_003), Instant.ofEpochSecond(1_004));

        orchestrator.kill(id);
        Instant deadline = Instant.now().plusSeconds(10);
        while (guests.history().size(id) > 0) {
            assertThat(Instant.now())
                    .as("history removed after the Killed event")
                    .isBefore(deadline);
            Thread.onSpinWait();
        }
    }

    @Test
    void metrics_of_a_fresh_sandbox_are_sampled_on_demand_and_filtered_by_start_and_end() {
        start();
        SandboxId id = h.create();
        live(id).fakeEnvd().metrics(clock -> reading(Instant.ofEpochSecond(2_000)));

        assertThat(guests.metrics(id, Optional.empty(), Optional.empty())).hasSize(1);
        assertThat(guests.metrics(id, Optional.of(Instant.ofEpochSecond(2_001)), Optional.empty()))
                .isEmpty();
        assertThat(guests.metrics(
                        id, Optional.of(Instant.ofEpochSecond(1_000)), Optional.of(Instant.ofEpochSecond(2_000))))
                .hasSize(1);
        assertThat(guests.latestMetrics(List.of(id, new SandboxId("y".repeat(SandboxId.LENGTH)))))
                .containsOnlyKeys(id);
        assertThatThrownBy(() -> guests.metrics(
                        id, Optional.of(Instant.ofEpochSecond(5)), Optional.of(Instant.ofEpochSecond(4))))
                .satisfies(e -> assertThat(agentError(e).kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT));
    }

    @Test
    void metrics_asked_during_a_liveness_check_of_a_fresh_sandbox_wait_then_answer() throws Exception {
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        live(id).fakeEnvd().metrics(clock -> reading(Instant.ofEpochSecond(2_000)));
        Gate gate = h.backend.holdNext(MockOp.LIVENESS); // holds the instance's lock while the sandbox stays RUNNING
        Future<?> check = threads.submit(orchestrator::checkLiveness);
        gate.awaitEntered(WAIT);
        AtomicReference<Thread> asker = new AtomicReference<>();
        Future<List<EnvdMetrics>> asked = threads.submit(() -> {
            asker.set(Thread.currentThread());
            return guests.metrics(id, Optional.empty(), Optional.empty());
        });
        // until the call answered (it did at once, with [], before: the SDK's getMetrics right after a create in CI)
        // or waits for the instance's lock
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!asked.isDone() && (asker.get() == null || asker.get().getState() != Thread.State.WAITING)) {
            assertThat(System.nanoTime())
                    .as("the metrics call neither answered nor waited")
                    .isLessThan(deadline);
            Thread.onSpinWait();
        }
        gate.release();

        assertThat(asked.get(10, TimeUnit.SECONDS)).hasSize(1);
        check.get(10, TimeUnit.SECONDS);
    }

    // ---- logs ---------------------------------------------------------------------------------------------------

    @Test
    void logs_read_every_journal_page_and_filter_by_cursor_direction_level_and_search() {
        start();
        SandboxId id = h.create();
        FakeEnvd envd = live(id).fakeEnvd();
        for (int i = 0; i < 2_500; i++) {
            envd.log(
                    EnvdLogEntry.Source.PROCESS,
                    i % 100 == 0 ? "ERROR" : "INFO",
                    OptionalInt.of(9),
                    "stdout",
                    "line " + i);
        }

        List<EnvdLogEntry> newest = guests.logs(
                id,
                new LogQuery(Optional.empty(), 3, LogQuery.Direction.BACKWARD, LogQuery.Level.DEBUG, Optional.empty()));
        assertThat(newest).extracting(EnvdLogEntry::message).containsExactly("line 2499", "line 2498", "line 2497");

        List<EnvdLogEntry> oldest = guests.logs(
                id,
                new LogQuery(Optional.empty(), 2, LogQuery.Direction.FORWARD, LogQuery.Level.DEBUG, Optional.empty()));
        assertThat(oldest).extracting(EnvdLogEntry::message).containsExactly("line 0", "line 1");

        List<EnvdLogEntry> errors = guests.logs(
                id,
                new LogQuery(
                        Optional.empty(), 1000, LogQuery.Direction.FORWARD, LogQuery.Level.ERROR, Optional.empty()));
        assertThat(errors).hasSize(25).allSatisfy(e -> assertThat(e.level()).isEqualTo("ERROR"));

        List<EnvdLogEntry> found = guests.logs(
                id,
                new LogQuery(
                        Optional.empty(),
                        1000,
                        LogQuery.Direction.FORWARD,
                        LogQuery.Level.DEBUG,
                        Optional.of("line 2400")));
        assertThat(found).extracting(EnvdLogEntry::message).containsExactly("line 2400");

        Instant future = Instant.now().plusSeconds(3600);
        assertThat(guests.logs(
                        id,
                        new LogQuery(
                                Optional.of(future),
                                10,
                                LogQuery.Direction.FORWARD,
                                LogQuery.Level.DEBUG,
                                Optional.empty())))
                .isEmpty();
        assertThat(guests.logs(
                        id,
                        new LogQuery(
                                Optional.of(future),
                                10,
                                LogQuery.Direction.BACKWARD,
                                LogQuery.Level.DEBUG,
                                Optional.empty())))
                .hasSize(10);
        assertThat(envd.count(FakeEnvd.Call.LOGS)).isEqualTo(6 * 3);
    }

    @Test
    void a_paused_sandbox_serves_the_logs_kept_at_pause_even_after_a_server_restart() {
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        live(id).fakeEnvd().log(EnvdLogEntry.Source.PROCESS, "INFO", OptionalInt.of(7), "stdout", "before pause");
        orchestrator.pause(id, PauseMode.WITH_MEMORY);

        assertThat(guests.logs(id, query(LogQuery.Direction.FORWARD)))
                .extracting(EnvdLogEntry::message)
                .containsExactly("before pause");

        guests.close();
        h.restart();
        guests = new SandboxGuests(h.orchestrator, GuestSettings.defaults(), h.clock);
        assertThat(guests.logs(id, query(LogQuery.Direction.BACKWARD)))
                .singleElement()
                .satisfies(e -> {
                    assertThat(e.message()).isEqualTo("before pause");
                    assertThat(e.pid()).hasValue(7);
                    assertThat(e.stream()).isEqualTo("stdout");
                });
    }

    @Test
    void a_resumed_sandbox_serves_live_logs_again() {
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        live(id).fakeEnvd().log(EnvdLogEntry.Source.ENVD, "INFO", OptionalInt.empty(), "envd", "kept");
        orchestrator.pause(id, PauseMode.WITH_MEMORY);
        orchestrator.connect(id, Duration.ofMinutes(5));

        live(id).fakeEnvd().log(EnvdLogEntry.Source.ENVD, "INFO", OptionalInt.empty(), "envd", "after resume");
        assertThat(guests.logs(id, query(LogQuery.Direction.FORWARD)))
                .extracting(EnvdLogEntry::message)
                .contains("after resume");
    }

    @Test
    void a_journal_lost_at_pause_does_not_fail_it_and_its_logs_conflict_while_paused() {
        Orchestrator orchestrator = start();
        SandboxId id = h.create();
        live(id).fakeEnvd().failNext(FakeEnvd.Call.LOGS, new EnvdException.Unreachable("gone", null));

        assertThat(orchestrator.pause(id, PauseMode.WITH_MEMORY)).isEqualTo(PauseOutcome.PAUSED);
        assertThatThrownBy(() -> guests.logs(id, query(LogQuery.Direction.FORWARD)))
                .isInstanceOfSatisfying(AgentEnvException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.CONFLICT);
                    assertThat(e.getMessage()).contains("logs could not be kept", "resume it");
                });
    }

    private static LogQuery query(LogQuery.Direction direction) {
        return new LogQuery(Optional.empty(), 100, direction, LogQuery.Level.DEBUG, Optional.empty());
    }

    private static EnvdMetrics reading(Instant at) {
        return new EnvdMetrics(at, 2, 10.0, 100, 1000, 10, 5, 50);
    }
}
