package io.agentenv.envd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.envd.protocol.process.ListResponse;
import io.agentenv.envd.protocol.process.ProcessConfig;
import io.agentenv.envd.protocol.process.ProcessInfo;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdInit;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.GuestProcess;
import io.agentenv.spi.SandboxId;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The client against a scripted HTTP server: shapes, headers, keep-alive per generation and every error path. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class DirectTransportTest {
    enum Via {
        TCP,
        UNIX_SOCKET
    }

    private static final SandboxId SANDBOX = new SandboxId("s".repeat(SandboxId.LENGTH));
    /**
     * Timeouts far above any answer's time even on a loaded 2-core machine (a 300 ms call timeout failed there): only
     * {@link #a_call_that_gets_no_answer_fails_after_the_call_timeout} waits for a timeout, with its own short one.
     */
    private static final EnvdClientSettings SETTINGS = new EnvdClientSettings(
            Duration.ofSeconds(5),
            Duration.ofSeconds(10),
            Duration.ofSeconds(2),
            Duration.ofMillis(5),
            Duration.ofSeconds(30),
            4,
            4096);

    @TempDir
    Path dir;

    private ScriptedEnvdServer server;
    private EnvdClients clients;
    private final CountDownLatch releaseHung = new CountDownLatch(1);

    @BeforeEach
    void start() throws Exception {
        server = new ScriptedEnvdServer(dir.resolve("envd.sock"));
        clients = new EnvdClients(SETTINGS, Clock.systemUTC());
    }

    @AfterEach
    void stop() throws Exception {
        releaseHung.countDown();
        clients.close();
        server.close();
    }

    private EnvdAddress address(Via via) {
        return switch (via) {
            case TCP -> new EnvdAddress.Tcp("127.0.0.1", server.port());
            case UNIX_SOCKET -> new EnvdAddress.Unix(dir.resolve("envd.sock"));
        };
    }

    @ParameterizedTest
    @EnumSource(Via.class)
    void metrics_are_read_in_envds_shape(Via via) throws Exception {
        server.answer("/metrics", 200, """
                {"ts":1764417600,"cpu_count":2,"cpu_used_pct":12.5,"mem_total":1000,"mem_used":400,"mem_cache":50,
                 "mem_total_mib":0,"mem_used_mib":0,"disk_used":30,"disk_total":90}""");
        var metrics = clients.open(SANDBOX, address(via), Optional.empty()).metrics();
        assertThat(metrics.timestamp()).isEqualTo(Instant.ofEpochSecond(1764417600));
        assertThat(metrics.cpuCount()).isEqualTo(2);
        assertThat(metrics.cpuUsedPct()).isEqualTo(12.5);
        assertThat(metrics.memUsed()).isEqualTo(400);
        assertThat(metrics.memTotal()).isEqualTo(1000);
        assertThat(metrics.memCache()).isEqualTo(50);
        assertThat(metrics.diskUsed()).isEqualTo(30);
        assertThat(metrics.diskTotal()).isEqualTo(90);
    }

    @ParameterizedTest
    @EnumSource(Via.class)
    void init_sends_the_body_and_later_calls_carry_the_new_token(Via via) throws Exception {
        server.answer("/init", 204, "");
        server.answer("/health", 204, "");
        EnvdClient client = clients.open(SANDBOX, address(via), Optional.empty());
        client.init(new EnvdInit(
                Optional.of(new AccessToken("tok-1")),
                Map.of("A", "b"),
                Optional.of("user"),
                Optional.of("/home/user"),
                Instant.parse("2026-11-29T12:00:00Z")));
        client.health();

        List<ScriptedEnvdServer.Seen> seen = server.seen();
        assertThat(seen.get(0).token()).isNull();
        assertThat(seen.get(0).body())
                .contains(
                        "\"accessToken\":\"tok-1\"",
                        "\"envVars\":{\"A\":\"b\"}",
                        "\"defaultUser\":\"user\"",
                        "\"defaultWorkdir\":\"/home/user\"",
                        "\"timestamp\":\"2026-11-29T12:00:00Z\"");
        assertThat(seen.get(1).token()).isEqualTo("tok-1");
    }

    @Test
    void calls_of_one_generation_share_a_keep_alive_connection_a_new_generation_its_own() throws Exception {
        server.answer("/health", 204, "");
        EnvdClient first = clients.open(SANDBOX, address(Via.TCP), Optional.empty());
        first.health();
        first.health();
        first.close();
        EnvdClient second = clients.open(SANDBOX, address(Via.TCP), Optional.empty());
        second.health();

        List<String> connections =
                server.seen().stream().map(ScriptedEnvdServer.Seen::connection).toList();
        assertThat(connections.get(0)).isEqualTo(connections.get(1));
        assertThat(connections.get(2)).isNotEqualTo(connections.get(0));
    }

    @Test
    void more_open_clients_than_jettys_default_thread_cap_all_keep_answering() throws Exception {
        // given: every open client keeps a selector task on the shared pool; Jetty's default cap was 200
        server.answer("/health", 204, "");
        List<EnvdClient> open = new java.util.ArrayList<>();
        for (int i = 0; i < 210; i++) {
            open.add(clients.open(SANDBOX, address(Via.TCP), Optional.empty()));
        }
        // when / then: the newest ones still get answers (before the fix the 200th onward timed out)
        for (EnvdClient client : open.subList(195, 210)) {
            client.health();
        }
        assertThat(server.seen()).hasSize(15);
    }

    @Test
    void logs_and_processes_are_parsed() throws Exception {
        server.answer("/logs", 200, """
                {"entries":[{"seq":3,"timestamp":"2026-11-29T20:46:59.743Z","source":"process","level":"INFO",
                "pid":7,"stream":"stdout","message":"hi\\n"},{"seq":4,"timestamp":"2026-11-29T20:47:00Z",
                "source":"envd","level":"WARN","stream":"io.agentenv.envd.Main","message":"started"}],
                "nextCursor":5,"firstAvailable":3}""");
        ListResponse list = ListResponse.newBuilder()
                .addProcesses(ProcessInfo.newBuilder()
                        .setPid(42)
                        .setTag("t1")
                        .setConfig(ProcessConfig.newBuilder()
                                .setCmd("sleep")
                                .addArgs("30")
                                .putEnvs("K", "V")
                                .setCwd("/tmp")))
                .addProcesses(ProcessInfo.newBuilder()
                        .setPid(43)
                        .setConfig(ProcessConfig.newBuilder().setCmd("sh")))
                .build();
        server.answer("/process.Process/List", 200, "application/proto", list.toByteArray());
        EnvdClient client = clients.open(SANDBOX, address(Via.TCP), Optional.empty());

        var page = client.logs(2, 10);
        assertThat(server.seen().getLast().pathAndQuery()).isEqualTo("/logs?cursor=2&limit=10");
        assertThat(page.nextCursor()).isEqualTo(5);
        assertThat(page.firstAvailable()).isEqualTo(3);
        assertThat(page.entries())
                .containsExactly(
                        new EnvdLogEntry(
                                3,
                                Instant.parse("2026-11-29T20:46:59.743Z"),
                                EnvdLogEntry.Source.PROCESS,
                                "INFO",
                                OptionalInt.of(7),
                                "stdout",
                                "hi\n"),
                        new EnvdLogEntry(
                                4,
                                Instant.parse("2026-11-29T20:47:00Z"),
                                EnvdLogEntry.Source.ENVD,
                                "WARN",
                                OptionalInt.empty(),
                                "io.agentenv.envd.Main",
                                "started"));

        assertThat(client.processes())
                .containsExactly(
                        new GuestProcess(
                                42, Optional.of("t1"), "sleep", List.of("30"), Map.of("K", "V"), Optional.of("/tmp")),
                        new GuestProcess(43, Optional.empty(), "sh", List.of(), Map.of(), Optional.empty()));
        assertThat(server.seen().getLast().method()).isEqualTo("POST");
        assertThat(server.seen().getLast().contentType()).isEqualTo("application/proto");
        assertThat(server.seen().getLast().body()).isEmpty();
    }

    @Test
    void an_error_status_is_rejected_with_envds_message() {
        server.answer("/metrics", 401, "{\"code\":401,\"message\":\"missing or invalid access token\"}");
        EnvdClient client = clients.open(SANDBOX, address(Via.TCP), Optional.empty());
        assertThatThrownBy(client::metrics).isInstanceOfSatisfying(EnvdException.Rejected.class, e -> {
            assertThat(e.status()).isEqualTo(401);
            assertThat(e.getMessage()).contains("missing or invalid access token");
        });
    }

    @Test
    void an_unreadable_body_is_rejected_with_status_zero() {
        server.answer("/metrics", 200, "{\"ts\":\"soon\"}");
        EnvdClient client = clients.open(SANDBOX, address(Via.TCP), Optional.empty());
        assertThatThrownBy(client::metrics)
                .isInstanceOfSatisfying(
                        EnvdException.Rejected.class,
                        e -> assertThat(e.status()).isZero());
    }

    @Test
    void an_answer_larger_than_the_limit_is_not_buffered() {
        server.answer("/logs", 200, "{\"entries\":[],\"pad\":\"" + "x".repeat(8192) + "\"}");
        EnvdClient client = clients.open(SANDBOX, address(Via.TCP), Optional.empty());
        assertThatThrownBy(() -> client.logs(0, 10)).isInstanceOf(EnvdException.Unreachable.class);
    }

    @Test
    void a_call_that_gets_no_answer_fails_after_the_call_timeout() {
        server.behave("/metrics", request -> {
            releaseHung.await(30, TimeUnit.SECONDS);
            return new ScriptedEnvdServer.Answer(500, "");
        });
        EnvdClientSettings shortCalls = new EnvdClientSettings(
                Duration.ofSeconds(5),
                Duration.ofMillis(300),
                Duration.ofSeconds(2),
                Duration.ofMillis(5),
                Duration.ofSeconds(30),
                4,
                4096);
        try (EnvdClients impatient = new EnvdClients(shortCalls, Clock.systemUTC())) {
            EnvdClient client = impatient.open(SANDBOX, address(Via.TCP), Optional.empty());
            assertThatThrownBy(client::metrics)
                    .isInstanceOf(EnvdException.Unreachable.class)
                    .hasMessageContaining("GET /metrics");
        }
    }

    @Test
    void nothing_listening_is_unreachable() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        EnvdClient tcp = clients.open(SANDBOX, new EnvdAddress.Tcp("127.0.0.1", port), Optional.empty());
        assertThatThrownBy(tcp::health).isInstanceOf(EnvdException.Unreachable.class);
        EnvdClient unix = clients.open(SANDBOX, new EnvdAddress.Unix(dir.resolve("absent.sock")), Optional.empty());
        assertThatThrownBy(unix::health).isInstanceOf(EnvdException.Unreachable.class);
    }

    @Test
    void a_closed_client_is_unreachable_and_forgotten() throws Exception {
        server.answer("/health", 204, "");
        EnvdClient client = clients.open(SANDBOX, address(Via.TCP), Optional.empty());
        client.health();
        assertThat(clients.openClients()).isEqualTo(1);
        client.close();
        client.close();
        assertThat(clients.openClients()).isZero();
        assertThatThrownBy(client::health)
                .isInstanceOf(EnvdException.Unreachable.class)
                .hasMessageContaining("closed");
    }

    @Test
    void a_client_handed_over_keeps_its_connection_and_token_and_names_the_new_sandbox() throws Exception {
        // given: a client that has a connection and a token
        server.answer("/init", 204, "");
        server.answer("/health", 204, "");
        EnvdClient first = clients.open(SANDBOX, address(Via.TCP), Optional.empty());
        first.init(new EnvdInit(
                Optional.of(new AccessToken("tok-2")),
                Map.of(),
                Optional.empty(),
                Optional.empty(),
                Instant.parse("2026-11-29T12:00:00Z")));
        SandboxId next = new SandboxId("n".repeat(SandboxId.LENGTH));
        // when
        EnvdClient moved = clients.handOver(first, next);
        moved.health();
        // then: same connection, same token, one open client, the old one closed
        List<ScriptedEnvdServer.Seen> seen = server.seen();
        assertThat(seen.get(1).connection()).isEqualTo(seen.get(0).connection());
        assertThat(seen.get(1).token()).isEqualTo("tok-2");
        assertThat(clients.openClients()).isEqualTo(1);
        assertThatThrownBy(first::health)
                .isInstanceOf(EnvdException.Unreachable.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(() -> clients.handOver(first, next)).isInstanceOf(IllegalStateException.class);
        server.answer("/metrics", 500, "{\"message\":\"boom\"}");
        assertThatThrownBy(moved::metrics).hasMessageContaining(next.value());
        moved.close();
        assertThat(clients.openClients()).isZero();
    }

    @Test
    void waiting_for_health_probes_until_envd_answers() throws Exception {
        AtomicInteger probes = new AtomicInteger();
        server.behave(
                "/health",
                request -> probes.incrementAndGet() < 4
                        ? new ScriptedEnvdServer.Answer(503, "")
                        : new ScriptedEnvdServer.Answer(204, ""));
        EnvdClient client = clients.open(SANDBOX, address(Via.UNIX_SOCKET), Optional.empty());
        client.waitUntilHealthy(Instant.now().plusSeconds(10));
        assertThat(probes).hasValue(4);
    }

    @Test
    void waiting_until_ready_probes_the_ready_route_until_envd_has_finished_its_set_up() throws Exception {
        AtomicInteger probes = new AtomicInteger();
        server.behave(
                "/ready",
                request -> probes.incrementAndGet() < 3
                        ? new ScriptedEnvdServer.Answer(503, "{\"code\":503,\"message\":\"envd is still setting up\"}")
                        : new ScriptedEnvdServer.Answer(204, ""));
        EnvdClient client = clients.open(SANDBOX, address(Via.UNIX_SOCKET), Optional.empty());
        client.waitUntilReady(Instant.now().plusSeconds(10));
        assertThat(probes).hasValue(3);
    }

    @Test
    void waiting_for_health_gives_up_at_the_deadline_with_the_last_failure() {
        EnvdClient client = clients.open(SANDBOX, new EnvdAddress.Unix(dir.resolve("never.sock")), Optional.empty());
        assertThatThrownBy(() -> client.waitUntilHealthy(Instant.now().plusMillis(200)))
                .isInstanceOf(EnvdException.Unreachable.class)
                .hasMessageContaining("not healthy")
                .cause()
                .isInstanceOf(EnvdException.Unreachable.class);
    }

    @Test
    void closing_the_clients_closes_every_open_client() {
        EnvdClient one = clients.open(SANDBOX, address(Via.TCP), Optional.empty());
        clients.close();
        assertThatThrownBy(one::health).isInstanceOf(EnvdException.Unreachable.class);
        assertThatThrownBy(() -> clients.open(SANDBOX, address(Via.TCP), Optional.empty()))
                .isInstanceOf(IllegalStateException.class);
    }
}
