package io.agentenv.envd.process;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.envd.logs.LogJournal;
import io.agentenv.envd.protocol.connect.WireFormat;
import io.agentenv.envd.protocol.process.ProcessConfig;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.envd.protocol.process.StartResponse;
import io.agentenv.envd.session.Session;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** envd answers before its native launcher is prepared: a Start that arrives that early runs without waiting for it. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class EarlyStartTest {
    private final CountDownLatch waitedFor = new CountDownLatch(1);
    /** The launcher's native set-up, still running: records whether a request waits for it. */
    private final CompletableFuture<Optional<NativeSpawn>> nativeSpawn = new CompletableFuture<>() {
        @Override
        public Optional<NativeSpawn> join() {
            waitedFor.countDown();
            return super.join();
        }
    };

    private ProcessService processes;
    private TestEnvd envd;

    @BeforeEach
    void start() throws Exception {
        Clock clock = Clock.systemUTC();
        Session session = new Session(clock);
        LogJournal journal = new LogJournal(clock, 1 << 20);
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        ProcessLauncher launcher = new ProcessLauncher(
                uid,
                Optional.of(Path.of("/usr/bin/setsid")),
                Optional.empty(),
                nativeSpawn,
                PosixSignals.forThisMachine(Optional.empty()),
                journal,
                clock);
        Accounts accounts = new Accounts(UserDirectory.system(), session::defaultUser, System.getProperty("user.name"));
        processes = new ProcessService(
                new ProcessTable(clock, Duration.ofMinutes(1)),
                launcher,
                accounts,
                session,
                clock,
                ProcessService.DEFAULT_PATH);
        envd = TestEnvd.start(session, Optional.empty(), (rpcs, routes) -> processes.register(rpcs));
    }

    @AfterEach
    void stop() throws Exception {
        processes.close();
        envd.close();
    }

    @Test
    void a_start_before_the_native_launcher_is_ready_runs_through_the_jdk_without_waiting() throws Exception {
        StartRequest request = StartRequest.newBuilder()
                .setProcess(
                        ProcessConfig.newBuilder().setCmd("/bin/sh").addAllArgs(List.of("-c", "echo early; exit 3")))
                .setStdin(false)
                .build();

        try (var stream = envd.client().stream(
                "process.Process/Start", request, StartResponse.getDefaultInstance(), WireFormat.JSON, Map.of())) {
            assertThat(stream.status()).isEqualTo(200);
            List<StartResponse> events = stream.rest();

            assertThat(events.getFirst().getEvent().hasStart()).isTrue();
            assertThat(events.stream()
                            .filter(e -> e.getEvent().hasData())
                            .map(e -> e.getEvent().getData().getStdout().toStringUtf8())
                            .reduce("", String::concat))
                    .isEqualTo("early\n");
            assertThat(events.getLast().getEvent().getEnd().getExitCode()).isEqualTo(3);
            assertThat(stream.end().error()).isEmpty();
        }
        assertThat(waitedFor.getCount())
                .as("nobody waited for the native launcher")
                .isEqualTo(1);
        assertThat(processes.prepared()).isNotDone();
    }

    @Test
    void once_the_native_launcher_is_prepared_starts_use_it() throws Exception {
        nativeSpawn.complete(NativeSpawn.load());
        StartRequest request = StartRequest.newBuilder()
                .setProcess(ProcessConfig.newBuilder().setCmd("/bin/sh").addAllArgs(List.of("-c", "echo later")))
                .setStdin(false)
                .build();

        try (var stream = envd.client().stream(
                "process.Process/Start", request, StartResponse.getDefaultInstance(), WireFormat.JSON, Map.of())) {
            List<StartResponse> events = stream.rest();

            assertThat(events.getLast().getEvent().getEnd().getExitCode()).isZero();
        }
        assertThat(processes.prepared()).isDone();
    }
}
