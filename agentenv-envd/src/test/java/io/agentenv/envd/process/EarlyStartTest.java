package io.agentenv.envd.process;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.envd.logs.LogJournal;
import io.agentenv.envd.protocol.connect.WireFormat;
import io.agentenv.envd.protocol.process.ProcessConfig;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.envd.protocol.process.StartResponse;
import io.agentenv.envd.session.Session;
import io.agentenv.envd.testing.ConnectTestClient;
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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** envd answers before its native launcher is prepared: a Start that arrives that early waits for it and succeeds. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class EarlyStartTest {
    private final CountDownLatch waitedFor = new CountDownLatch(1);
    /** The launcher's native set-up, still running: records that a request waits for it. */
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
        ProcessLauncher launcher = new ProcessLauncher(uid, Optional.of(Path.of("/usr/bin/setsid")), Optional.empty(),
                nativeSpawn, PosixSignals.forThisMachine(), journal, clock);
        Accounts accounts = new Accounts(UserDirectory.system(), session::defaultUser, System.getProperty("user.name"));
        processes = new ProcessService(new ProcessTable(clock, Duration.ofMinutes(1)), launcher, accounts, session, clock,
                ProcessService.DEFAULT_PATH);
        envd = TestEnvd.start(session, Optional.empty(), (rpcs, routes) -> processes.register(rpcs));
    }

    @AfterEach
    void stop() throws Exception {
        processes.close();
        envd.close();
    }

    @Test
    void a_start_sent_before_the_native_launcher_is_prepared_waits_for_it_and_runs() throws Exception {
        StartRequest request = StartRequest.newBuilder().setProcess(ProcessConfig.newBuilder().setCmd("/bin/sh")
                .addAllArgs(List.of("-c", "echo early"))).setStdin(false).build();
        CompletableFuture<ConnectTestClient.Stream<StartResponse>> call = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                call.complete(envd.client().stream("process.Process/Start", request, StartResponse.getDefaultInstance(),
                        WireFormat.JSON, Map.of()));
            } catch (Exception e) {
                call.completeExceptionally(e);
            }
        });
        assertThat(waitedFor.await(10, TimeUnit.SECONDS)).as("the Start waits for the launcher").isTrue();
        assertThat(call).isNotDone();

        nativeSpawn.complete(NativeSpawn.load());

        try (var stream = call.get(10, TimeUnit.SECONDS)) {
            assertThat(stream.status()).isEqualTo(200);
            List<StartResponse> events = stream.rest();

            assertThat(events.getFirst().getEvent().hasStart()).isTrue();
            assertThat(events.stream().filter(e -> e.getEvent().hasData())
                    .map(e -> e.getEvent().getData().getStdout().toStringUtf8()).reduce("", String::concat))
                    .isEqualTo("early\n");
            assertThat(events.getLast().getEvent().getEnd().getExitCode()).isZero();
            assertThat(stream.end().error()).isEmpty();
        }
    }
}
