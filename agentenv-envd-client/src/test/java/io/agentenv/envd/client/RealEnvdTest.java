package io.agentenv.envd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.envd.protocol.process.ProcessConfig;
import io.agentenv.envd.protocol.process.ProcessEvent;
import io.agentenv.envd.protocol.process.ProcessSelector;
import io.agentenv.envd.protocol.process.SendSignalRequest;
import io.agentenv.envd.protocol.process.SendSignalResponse;
import io.agentenv.envd.protocol.process.Signal;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.envd.protocol.process.StartResponse;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdInit;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.EnvdLogPage;
import io.agentenv.spi.GuestCommand;
import io.agentenv.spi.GuestProcess;
import io.agentenv.spi.SandboxId;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The client against the real envd, started from its packaged jar ({@code agentenv-envd/target}, built earlier in the
 * reactor) as a local process, over TCP and over its unix socket.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class RealEnvdTest {
    private static final Path ENVD_DIR =
            Path.of("..", "agentenv-envd", "target").toAbsolutePath().normalize();
    private static final SandboxId SANDBOX = new SandboxId("r".repeat(SandboxId.LENGTH));
    private static final AccessToken TOKEN = new AccessToken("real-envd-test-token");

    private Path dir;
    private Process envd;
    private int port;
    private EnvdClients clients;
    private EnvdAddress.Tcp tcp;
    private EnvdAddress.Unix unix;

    @BeforeAll
    void startEnvd() throws Exception {
        Path jar = ENVD_DIR.resolve("agentenv-envd.jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("envd jar missing: " + jar + " (mvn -B -pl agentenv-envd -am package)");
        }
        dir = Files.createTempDirectory("envd-client-test");
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("@" + ENVD_DIR.resolve("jvm.options"));
        command.addAll(List.of(
                "-jar",
                jar.toString(),
                "--host",
                "127.0.0.1",
                "--port",
                String.valueOf(port),
                "--unix-socket",
                dir.resolve("envd.sock").toString(),
                "--sandbox-id",
                SANDBOX.value()));
        envd = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("envd.log").toFile())
                .start();
        clients = new EnvdClients(EnvdClientSettings.DEFAULTS, Clock.systemUTC());
        tcp = new EnvdAddress.Tcp("127.0.0.1", port);
        unix = new EnvdAddress.Unix(dir.resolve("envd.sock"));

        EnvdClient first = clients.open(SANDBOX, tcp, Optional.empty());
        first.waitUntilHealthy(Instant.now().plusSeconds(60));
        first.init(new EnvdInit(
                Optional.of(TOKEN), Map.of("FROM_INIT", "yes"), Optional.empty(), Optional.empty(), Instant.now()));
        first.close();
    }

    @AfterAll
    void stopEnvd() throws Exception {
        if (clients != null) {
            clients.close();
        }
        if (envd != null) {
            envd.destroy();
            if (!envd.waitFor(10, TimeUnit.SECONDS)) {
                envd.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
        if (dir != null) {
            try (var files = Files.walk(dir)) {
                files.sorted((a, b) -> b.compareTo(a)).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    void health_and_metrics_work_over_tcp_and_the_unix_socket() throws Exception {
        for (EnvdAddress address : List.of(tcp, unix)) {
            try (EnvdClient client = clients.open(SANDBOX, address, Optional.of(TOKEN))) {
                client.waitUntilHealthy(Instant.now().plusSeconds(10));
                client.waitUntilReady(Instant.now().plusSeconds(10));
                var metrics = client.metrics();
                assertThat(metrics.cpuCount()).isPositive();
                assertThat(metrics.memTotal()).isPositive();
                assertThat(metrics.diskTotal()).isPositive();
                assertThat(metrics.timestamp())
                        .isBetween(Instant.now().minusSeconds(60), Instant.now().plusSeconds(5));
            }
        }
    }

    @Test
    void a_command_quiet_for_longer_than_the_idle_timeout_keeps_its_stream() throws Exception {
        EnvdClientSettings shortIdle = new EnvdClientSettings(
                Duration.ofSeconds(1),
                Duration.ofSeconds(10),
                Duration.ofSeconds(1),
                Duration.ofMillis(5),
                Duration.ofSeconds(2),
                2,
                1024 * 1024);
        try (EnvdClients quick = new EnvdClients(shortIdle, Clock.systemUTC());
                EnvdClient client = quick.open(SANDBOX, unix, Optional.of(TOKEN))) {
            GuestCommand.Exit exit = client.run(
                    GuestCommand.shell("sleep 5; echo done", Optional.empty(), Map.of(), Optional.empty()),
                    new GuestCommand.Output() {
                        @Override
                        public void stdout(byte[] chunk) {}

                        @Override
                        public void stderr(byte[] chunk) {}
                    });

            assertThat(exit.succeeded()).as(exit.status()).isTrue();
        }
    }

    @Test
    void a_client_without_the_token_is_rejected_with_401_after_init() {
        try (EnvdClient client = clients.open(SANDBOX, unix, Optional.empty())) {
            assertThatThrownBy(client::metrics)
                    .isInstanceOfSatisfying(
                            EnvdException.Rejected.class,
                            e -> assertThat(e.status()).isEqualTo(401));
        }
    }

    @Test
    void a_started_process_is_listed_and_its_output_is_paged_through_the_logs() throws Exception {
        try (EnvdClient client = clients.open(SANDBOX, unix, Optional.of(TOKEN))) {
            CompletableFuture<Integer> started = new CompletableFuture<>();
            List<ProcessEvent> events = new CopyOnWriteArrayList<>();
            StartRequest start = StartRequest.newBuilder()
                    .setProcess(ProcessConfig.newBuilder()
                            .setCmd("/bin/sh")
                            .addArgs("-c")
                            .addArgs("echo from-the-process; exec sleep 20"))
                    .setTag("client-test")
                    .build();
            Future<?> stream = Executors.newVirtualThreadPerTaskExecutor().submit(() -> {
                client.serverStream(
                        "process.Process/Start",
                        start,
                        StartResponse.getDefaultInstance(),
                        Optional.empty(),
                        Optional.empty(),
                        response -> {
                            events.add(response.getEvent());
                            if (response.getEvent().hasStart()) {
                                started.complete(response.getEvent().getStart().getPid());
                            }
                        });
                return null;
            });
            int pid = started.get(20, TimeUnit.SECONDS);

            List<GuestProcess> processes = client.processes();
            assertThat(processes).anySatisfy(p -> {
                assertThat(p.pid()).isEqualTo(pid);
                assertThat(p.cmd()).isEqualTo("/bin/sh");
                assertThat(p.tag()).contains("client-test");
            });

            List<EnvdLogEntry> seen = new ArrayList<>();
            Instant deadline = Instant.now().plusSeconds(20);
            long cursor = 0;
            while (seen.stream()
                    .noneMatch(e -> e.stream().equals("stdout") && e.message().contains("from-the-process"))) {
                assertThat(Instant.now())
                        .as("process output reached the journal")
                        .isBefore(deadline);
                EnvdLogPage page = client.logs(cursor, 2);
                assertThat(page.entries()).hasSizeLessThanOrEqualTo(2);
                page.entries().forEach(e -> assertThat(e.seq()).isGreaterThanOrEqualTo(page.firstAvailable()));
                seen.addAll(page.entries());
                cursor = page.nextCursor();
            }
            assertThat(seen).extracting(EnvdLogEntry::seq).isSorted().doesNotHaveDuplicates();
            assertThat(seen).anySatisfy(e -> {
                assertThat(e.source()).isEqualTo(EnvdLogEntry.Source.PROCESS);
                assertThat(e.pid()).hasValue(pid);
                assertThat(e.stream()).isEqualTo("stdout");
            });

            client.unary(
                    "process.Process/SendSignal",
                    SendSignalRequest.newBuilder()
                            .setProcess(ProcessSelector.newBuilder().setPid(pid))
                            .setSignal(Signal.SIGNAL_SIGKILL)
                            .build(),
                    SendSignalResponse.getDefaultInstance(),
                    Optional.empty());
            stream.get(20, TimeUnit.SECONDS);
            assertThat(events)
                    .anySatisfy(e ->
                            assertThat(e.getData().getStdout().toStringUtf8()).isEqualTo("from-the-process\n"))
                    .last()
                    .satisfies(e -> assertThat(e.getEnd().getExited()).isFalse());
        }
    }

    @Test
    void a_file_uploaded_over_the_unix_socket_downloads_byte_for_byte() throws Exception {
        byte[] content = new byte[3 * 1024 * 1024 + 7];
        new java.util.Random(7).nextBytes(content);
        try (EnvdClient client = clients.open(SANDBOX, unix, Optional.of(TOKEN))) {
            String written = client.upload(
                    dir.resolve("upload/blob.bin").toString(),
                    Optional.empty(),
                    content.length,
                    () -> new java.io.ByteArrayInputStream(content));
            assertThat(written).isEqualTo(dir.resolve("upload/blob.bin").toString());
            java.io.ByteArrayOutputStream back = new java.io.ByteArrayOutputStream();
            long[] announced = {0};
            client.download(written, Optional.empty(), length -> {
                announced[0] = length;
                return back;
            });
            assertThat(announced[0]).isEqualTo(content.length);
            assertThat(back.toByteArray()).isEqualTo(content);
        }
    }

    @Test
    void run_streams_both_outputs_and_returns_the_exit_code() throws Exception {
        try (EnvdClient client = clients.open(SANDBOX, unix, Optional.of(TOKEN))) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
            GuestCommand command = new GuestCommand(
                    "/bin/sh",
                    List.of("-c", "echo \"$GREETING from $(pwd)\"; echo oops >&2; exit 3"),
                    Optional.empty(),
                    Map.of("GREETING", "hello"),
                    Optional.of("/tmp"),
                    Optional.empty());

            GuestCommand.Exit exit = client.run(command, new GuestCommand.Output() {
                @Override
                public void stdout(byte[] chunk) {
                    out.writeBytes(chunk);
                }

                @Override
                public void stderr(byte[] chunk) {
                    err.writeBytes(chunk);
                }
            });

            assertThat(exit).isEqualTo(new GuestCommand.Exit(3, true, "exit status 3"));
            assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("hello from /tmp\n");
            assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("oops\n");
            assertThatThrownBy(() -> client.run(
                            new GuestCommand(
                                    "/bin/true",
                                    List.of(),
                                    Optional.of("nobody-here"),
                                    Map.of(),
                                    Optional.empty(),
                                    Optional.empty()),
                            new GuestCommand.Output() {
                                @Override
                                public void stdout(byte[] chunk) {}

                                @Override
                                public void stderr(byte[] chunk) {}
                            }))
                    .isInstanceOf(EnvdException.Rejected.class)
                    .hasMessageContaining("nobody-here");
        }
    }
}
