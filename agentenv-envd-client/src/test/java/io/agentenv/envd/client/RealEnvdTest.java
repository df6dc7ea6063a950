package io.agentenv.envd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.spi.AccessToken;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdInit;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.EnvdLogPage;
import io.agentenv.spi.GuestProcess;
import io.agentenv.spi.SandboxId;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

        HttpEnvdClient first = clients.open(SANDBOX, tcp, Optional.empty());
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
            try (HttpEnvdClient client = clients.open(SANDBOX, address, Optional.of(TOKEN))) {
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
    void a_client_without_the_token_is_rejected_with_401_after_init() {
        try (HttpEnvdClient client = clients.open(SANDBOX, unix, Optional.empty())) {
            assertThatThrownBy(client::metrics)
                    .isInstanceOfSatisfying(
                            EnvdException.Rejected.class,
                            e -> assertThat(e.status()).isEqualTo(401));
        }
    }

    @Test
    void a_started_process_is_listed_and_its_output_is_paged_through_the_logs() throws Exception {
        HttpClient raw = HttpClient.newHttpClient();
        HttpResponse<InputStream> stream = startProcess(raw, "echo from-the-process; exec sleep 20");
        try (InputStream in = stream.body();
                HttpEnvdClient client = clients.open(SANDBOX, unix, Optional.of(TOKEN))) {
            int pid = readPid(in);

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
            signal(raw, pid);
        }
    }

    /** process.Process/Start as a Connect server stream (JSON envelopes) with the JDK client. */
    private HttpResponse<InputStream> startProcess(HttpClient raw, String script) throws Exception {
        String json =
                "{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"" + script + "\"]},\"tag\":\"client-test\"}";
        byte[] payload = json.getBytes(StandardCharsets.UTF_8);
        ByteBuffer envelope = ByteBuffer.allocate(5 + payload.length)
                .put((byte) 0)
                .putInt(payload.length)
                .put(payload);
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/process.Process/Start"))
                .header("Content-Type", "application/connect+json")
                .header("X-Access-Token", TOKEN.value())
                .POST(HttpRequest.BodyPublishers.ofByteArray(envelope.array()))
                .build();
        HttpResponse<InputStream> response = raw.send(request, HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.statusCode()).isEqualTo(200);
        return response;
    }

    private static int readPid(InputStream in) throws IOException {
        DataInputStream data = new DataInputStream(in);
        data.readUnsignedByte();
        byte[] message = new byte[data.readInt()];
        data.readFully(message);
        Matcher pid = Pattern.compile("\"pid\"\\s*:\\s*(\\d+)").matcher(new String(message, StandardCharsets.UTF_8));
        assertThat(pid.find()).as("start event with a pid").isTrue();
        return Integer.parseInt(pid.group(1));
    }

    private void signal(HttpClient raw, int pid) throws Exception {
        HttpRequest kill = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/process.Process/SendSignal"))
                .header("Content-Type", "application/json")
                .header("X-Access-Token", TOKEN.value())
                .POST(HttpRequest.BodyPublishers.ofString(
                        "{\"process\":{\"pid\":" + pid + "},\"signal\":\"SIGNAL_SIGKILL\"}"))
                .build();
        assertThat(raw.send(kill, HttpResponse.BodyHandlers.ofString()).statusCode())
                .isEqualTo(200);
    }
}
