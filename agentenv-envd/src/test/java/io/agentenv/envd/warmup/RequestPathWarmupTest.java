package io.agentenv.envd.warmup;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.envd.filesystem.FilesystemRpc;
import io.agentenv.envd.filesystem.LocalFilesystem;
import io.agentenv.envd.filesystem.WatchHub;
import io.agentenv.envd.filesystem.Watchers;
import io.agentenv.envd.http.Access;
import io.agentenv.envd.logs.JournalFile;
import io.agentenv.envd.logs.LogJournal;
import io.agentenv.envd.logs.LogsEndpoint;
import io.agentenv.envd.process.ProcessService;
import io.agentenv.envd.protocol.process.ListRequest;
import io.agentenv.envd.protocol.process.ListResponse;
import io.agentenv.envd.session.Session;
import io.agentenv.envd.session.SessionEndpoints;
import io.agentenv.envd.session.SessionState;
import io.agentenv.envd.testing.TestEnvd;
import io.agentenv.envd.users.Accounts;
import io.agentenv.envd.users.UserDirectory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class RequestPathWarmupTest {
    /** {@code sh -c <command>}: the SDK's {@code bash -l -c} would read root's login profile of the machine running the tests. */
    private static final List<String> SHELL = List.of("/bin/sh", "-c");
    /** The shell for a warm-up whose first command never ends: {@code sh -c 'sleep 600;' <command>}. */
    private static final List<String> HANGING_SHELL = List.of("/bin/sh", "-c", "sleep 600;");

    /** No settling batches (the tests of the rounds themselves). */
    private static final JitSettling NO_SETTLING = new JitSettling(
            () -> 0, System::nanoTime, d -> {}, Duration.ofMillis(1), Duration.ofMillis(1), 0, 0, Duration.ZERO);

    @TempDir
    Path dir;

    private LogJournal journal;
    private ProcessService processes;
    private UserDirectory users;
    private TestEnvd envd;
    private Path socket;
    private Session session;

    @BeforeEach
    void start_envd() throws Exception {
        Clock clock = Clock.systemUTC();
        session = new Session(clock);
        // envd's own user under its name and as E2B's "user", so that the Basic-auth Starts run as well
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        int gid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:gid");
        String me = System.getProperty("user.name");
        Files.writeString(
                dir.resolve("passwd"),
                me + ":x:" + uid + ":" + gid + "::" + dir + ":/bin/sh\n" + "user:x:" + uid + ":" + gid + "::" + dir
                        + ":/bin/sh\n");
        Files.writeString(dir.resolve("group"), "");
        users = new UserDirectory(dir.resolve("passwd"), dir.resolve("group"));
        Accounts accounts = new Accounts(users, session::defaultUser, me);
        journal =
                new LogJournal(clock, 1 << 20, Optional.of(JournalFile.create(dir.resolve("log/envd.jsonl"), 1 << 20)));
        processes = ProcessService.create(
                accounts, session, journal, clock, Duration.ofMinutes(5), ProcessService.DEFAULT_PATH);
        processes.prepareInBackground();
        socket = dir.resolve("envd.sock");
        WatchHub watchHub = new WatchHub();
        envd = TestEnvd.start(session, Optional.of(socket), (rpcs, routes) -> {
            processes.register(rpcs);
            new SessionEndpoints(session).register(routes);
            routes.add("GET", "/logs", Access.TOKEN, new LogsEndpoint(journal));
            new FilesystemRpc(new LocalFilesystem(), watchHub, new Watchers(watchHub, 100, 10_000), accounts, session)
                    .register(rpcs);
        });
        processes.prepared().get(30, TimeUnit.SECONDS);
    }

    @AfterEach
    void stop_envd() throws Exception {
        processes.close();
        envd.close();
    }

    /** The claimed connections among {@code rounds} rounds: every other one of the connections they need. */
    private static int claimedConnections(int rounds) {
        int connections =
                (rounds + RequestPathWarmup.ROUNDS_PER_CONNECTION - 1) / RequestPathWarmup.ROUNDS_PER_CONNECTION;
        return connections / 2;
    }

    private RequestPathWarmup warmup(int rounds, List<String> shell, Duration timeout) {
        return new RequestPathWarmup(
                rounds,
                shell,
                envd.port(),
                Optional.of(socket),
                processes,
                journal,
                session,
                users,
                timeout,
                NO_SETTLING,
                RequestPathWarmup.SETTLE_ROUNDS);
    }

    @Test
    void the_warm_up_sends_every_round_and_leaves_no_process_journal_entry_or_line_behind() throws Exception {
        journal.envd("INFO", "Main", "envd listening");

        int requests = warmup(2 * RequestPathWarmup.ROUNDS_PER_CONNECTION + 3, SHELL, Duration.ofSeconds(30))
                .run();

        // three requests a round, the rounds after the full GC too, and the claim's /init that opens each claimed
        // connection (every other one)
        int rounds = 2 * RequestPathWarmup.ROUNDS_PER_CONNECTION + 3;
        assertThat(requests)
                .isEqualTo(3 * (rounds + RequestPathWarmup.ROUNDS_AFTER_GC)
                        + claimedConnections(rounds)
                        + claimedConnections(RequestPathWarmup.ROUNDS_AFTER_GC));
        assertThat(processes.knownPids()).isEmpty();
        ListResponse listed = envd.client()
                .unary("process.Process/List", ListRequest.getDefaultInstance(), Map.of())
                .message(ListResponse.getDefaultInstance());
        assertThat(listed.getProcessesList()).isEmpty();
        assertThat(journal.read(0, 100, OptionalInt.empty()).entries())
                .extracting(LogJournal.Entry::message)
                .containsExactly("envd listening");
        assertThat(Files.readAllLines(dir.resolve("log/envd.jsonl")))
                .singleElement()
                .asString()
                .startsWith("{\"seq\":1,")
                .contains("envd listening");
        journal.envd("INFO", "Main", "next");
        assertThat(journal.read(0, 100, OptionalInt.empty()).entries())
                .extracting(LogJournal.Entry::seq)
                .containsExactly(1L, 2L);
    }

    @Test
    void other_connections_are_a_claimed_sandboxs_with_a_token_then_the_session_resets() throws Exception {
        SessionState uninitialised = session.current();
        AtomicBoolean sawToken = new AtomicBoolean();
        AtomicBoolean sawClaim = new AtomicBoolean();
        AtomicBoolean done = new AtomicBoolean();
        Thread observer = Thread.ofVirtual().start(() -> {
            while (!done.get()) {
                SessionState now = session.current();
                sawToken.compareAndSet(false, now.accessToken().isPresent());
                sawClaim.compareAndSet(
                        false,
                        now.defaultUser().equals(Optional.of("user"))
                                && now.envVars().containsKey(RequestPathWarmup.WARMUP_ENV_VAR));
                Thread.onSpinWait();
            }
        });

        int requests;
        try {
            requests = warmup(2 * RequestPathWarmup.ROUNDS_PER_CONNECTION, SHELL, Duration.ofSeconds(30))
                    .run();
        } finally {
            done.set(true);
            observer.join();
        }

        // a token-less and a claimed connection (its claim: +1), then the rounds after the GC with their claims
        assertThat(requests)
                .isEqualTo(3 * (2 * RequestPathWarmup.ROUNDS_PER_CONNECTION + RequestPathWarmup.ROUNDS_AFTER_GC)
                        + 1
                        + claimedConnections(RequestPathWarmup.ROUNDS_AFTER_GC));
        assertThat(sawToken).as("a token was set while the warm-up ran").isTrue();
        assertThat(sawClaim).as("the claim's user and env var were set").isTrue();
        assertThat(session.current()).isEqualTo(uninitialised);
        assertThat(session.hasAccessToken()).isFalse();
        assertThat(journal.read(0, 100, OptionalInt.empty()).entries()).isEmpty();
    }

    @Test
    void sdk_shaped_batches_run_until_the_compiler_stays_quiet_and_leave_no_trace() throws Exception {
        // a fake compiler that works while processes keep appearing: 1 ms per process up to the rounds and two batches
        int rounds = 2;
        int settleRounds = 3;
        long busyUntil = rounds + 2L * settleRounds;
        AtomicLong clock = new AtomicLong();
        JitSettling settling = new JitSettling(
                () -> Math.min(processes.knownPids().size(), busyUntil) * 1_000_000L,
                clock::get,
                d -> clock.addAndGet(d.toNanos()),
                Duration.ofMillis(20),
                Duration.ofMillis(100),
                500_000,
                10,
                Duration.ofMinutes(1));
        SessionState uninitialised = session.current();

        int requests = new RequestPathWarmup(
                        rounds,
                        SHELL,
                        envd.port(),
                        Optional.of(socket),
                        processes,
                        journal,
                        session,
                        users,
                        Duration.ofSeconds(30),
                        settling,
                        settleRounds)
                .run();

        // batches 1 and 2 keep the compiler busy, batch 3 does not; a batch: a claim on each connection, one Start a
        // round
        int claimsPerBatch = (settleRounds + RequestPathWarmup.SETTLE_ROUNDS_PER_CONNECTION - 1)
                / RequestPathWarmup.SETTLE_ROUNDS_PER_CONNECTION;
        assertThat(requests)
                .isEqualTo(3 * (rounds + RequestPathWarmup.ROUNDS_AFTER_GC)
                        + claimedConnections(rounds)
                        + claimedConnections(RequestPathWarmup.ROUNDS_AFTER_GC)
                        + 3 * (settleRounds + claimsPerBatch));
        assertThat(processes.knownPids()).isEmpty();
        assertThat(session.current()).isEqualTo(uninitialised);
        assertThat(journal.read(0, 100, OptionalInt.empty()).entries()).isEmpty();
    }

    @Test
    void a_warm_up_that_fails_kills_and_forgets_its_processes_and_takes_back_its_entries() throws Exception {
        journal.envd("INFO", "Main", "envd listening");

        int requests = warmup(3, HANGING_SHELL, Duration.ofSeconds(1)).run();

        assertThat(requests).isZero();
        assertThat(processes.knownPids()).isEmpty();
        assertThat(journal.read(0, 100, OptionalInt.empty()).entries())
                .extracting(LogJournal.Entry::message)
                .singleElement()
                .isEqualTo("envd listening");
    }

    @Test
    void the_warm_up_starts_after_the_other_set_ups_and_completes_its_future_when_done() throws Exception {
        CompletableFuture<Void> otherSetUp = new CompletableFuture<>();
        CompletableFuture<Void> done = new CompletableFuture<>();

        warmup(2, SHELL, Duration.ofSeconds(30)).startInBackground(List.of(otherSetUp), done);

        assertThat(done).isNotDone();
        assertThat(processes.knownPids()).isEmpty();
        otherSetUp.completeExceptionally(new IllegalStateException("a failed set-up counts as finished"));
        done.get(60, TimeUnit.SECONDS);
        assertThat(processes.knownPids()).isEmpty();
    }

    @Test
    void without_rounds_the_future_completes_at_once() {
        CompletableFuture<Void> done = new CompletableFuture<>();

        warmup(0, SHELL, Duration.ofSeconds(30)).startInBackground(List.of(new CompletableFuture<>()), done);

        assertThat(done).isCompleted();
    }
}
