package io.agentenv.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.SandboxOwners;
import io.agentenv.server.cluster.ClusterNode;
import io.agentenv.server.config.ClusterConfig;
import io.agentenv.server.config.ServerConfig;
import io.agentenv.server.credentials.ApiKey;
import io.agentenv.server.gateway.Gateway;
import io.agentenv.server.gateway.GatewaySettings;
import io.agentenv.store.postgres.PostgresDatabase;
import io.agentenv.store.postgres.PostgresNodeRegistry;
import io.agentenv.store.postgres.PostgresSandboxOwners;
import io.agentenv.store.postgres.PostgresServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two nodes (real servers on the mock backend) and a gateway on one PostgreSQL database: creates are placed, every
 * request reaches its sandbox's node, lists span the cluster, a paused sandbox of a drained node resumes on the other
 * node, and a node that stops renewing is declared dead, its running sandboxes reported lost and its writes refused.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ClusterRoutesTest {
    @TempDir
    Path dir;

    private PostgresServer.TestDatabase database;
    private PostgresDatabase gatewayDb;
    private TestServer a;
    private TestServer b;
    private Gateway gateway;
    private SandboxOwners owners;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeEach
    void start() throws Exception {
        database = PostgresServer.shared().newDatabase();
        Path password = Files.writeString(dir.resolve("password"), database.password());
        Files.createDirectory(dir.resolve("shared")); // what operators mount on every node
        a = node("a", password);
        b = node("b", password);
        gatewayDb = database.open();
        owners = new PostgresSandboxOwners(gatewayDb);
        PostgresNodeRegistry registry = new PostgresNodeRegistry(gatewayDb);
        gateway = Gateway.start(
                GatewaySettings.defaults(
                        new InetSocketAddress("127.0.0.1", 0), ApiKey.of(TestServer.KEY), List.of(), 64),
                registry,
                registry,
                owners,
                Clock.systemUTC());
    }

    private TestServer node(String id, Path password) throws Exception {
        int port = freePort();
        return new TestServer(
                Files.createDirectories(dir.resolve(id)),
                Map.of(
                        "AENV_LISTEN",
                        "127.0.0.1:" + port,
                        "AENV_CLUSTER_DATABASE_URL",
                        database.jdbcUrl(),
                        "AENV_CLUSTER_DATABASE_USER",
                        database.user(),
                        "AENV_CLUSTER_DATABASE_PASSWORD_FILE",
                        password.toString(),
                        "AENV_NODE_ID",
                        id,
                        "AENV_NODE_ADDRESS",
                        "http://127.0.0.1:" + port,
                        "AENV_CLUSTER_LEASE_SECONDS",
                        "3",
                        "AENV_CLUSTER_DEAD_AFTER_SECONDS",
                        "0",
                        "AENV_OBJECT_STORE_DIR",
                        dir.resolve("shared").toString()));
    }

    @AfterEach
    void stop() throws Exception {
        try {
            gateway.close();
            b.close();
            a.close();
        } finally {
            gatewayDb.close();
            database.close();
        }
    }

    @Test
    void creates_land_on_accepting_nodes_and_every_request_reaches_its_sandbox_s_node() throws Exception {
        drain("a");
        String onB = create();
        undrain("a");
        drain("b");
        String onA = create();
        undrain("b");
        assertThat(owner(onA)).contains(new NodeId("a"));
        assertThat(owner(onB)).contains(new NodeId("b"));

        for (String id : List.of(onA, onB)) {
            HttpResponse<String> info = send("GET", "/sandboxes/" + id, null);
            assertThat(info.statusCode()).isEqualTo(200);
            assertThat(a.parse(info).path("sandboxID").asText()).isEqualTo(id);
        }
        Set<String> listed = new HashSet<>();
        a.parse(send("GET", "/v2/sandboxes", null))
                .forEach(s -> listed.add(s.path("sandboxID").asText()));
        assertThat(listed).containsExactlyInAnyOrder(onA, onB);
        assertThat(a.orchestrator.get(new io.agentenv.spi.SandboxId(onA))).isNotNull();
        assertThat(send("POST", "/sandboxes/" + onB + "/timeout", "{\"timeout\":120}")
                        .statusCode())
                .isEqualTo(204);

        JsonNode nodes = a.parse(send("GET", "/nodes", null));
        assertThat(nodes).hasSize(2);
        assertThat(nodes.get(0).path("status").asText()).isEqualTo("ready");
        assertThat(send("DELETE", "/sandboxes/" + onA, null).statusCode()).isEqualTo(204);
        assertThat(send("GET", "/sandboxes/" + onA, null).statusCode()).isEqualTo(404);
    }

    @Test
    void a_paused_sandbox_of_a_drained_node_resumes_on_another_node() throws Exception {
        drain("b");
        String id = create();
        assertThat(owner(id)).contains(new NodeId("a"));
        assertThat(send("POST", "/sandboxes/" + id + "/pause", null).statusCode())
                .isEqualTo(204);
        undrain("b");
        drain("a");
        // as if the nodes were different hosts: b finds the paused state in the shared storage only
        deleteTree(dir.resolve("a").resolve("artifacts").resolve("sandboxes"));
        HttpResponse<String> resumed = send("POST", "/sandboxes/" + id + "/connect", "{\"timeout\":60}");
        assertThat(resumed.statusCode()).as(resumed.body()).isIn(200, 201);
        assertThat(owner(id)).contains(new NodeId("b"));
        assertThat(sharedObjects()).isEmpty(); // consumed by the resume
        assertThat(a.parse(send("GET", "/sandboxes/" + id, null)).path("state").asText())
                .isEqualTo("running");
    }

    @Test
    void a_node_that_stops_renewing_is_declared_dead_and_its_running_sandboxes_are_lost() throws Exception {
        drain("b");
        String running = create();
        String paused = create();
        undrain("b");
        assertThat(send("POST", "/sandboxes/" + paused + "/pause", null).statusCode())
                .isEqualTo(204);

        a.cluster.orElseThrow().stopRenewing(); // as if the node's process stopped: its lease runs out
        await(() -> owners.lost(running).isPresent(), Duration.ofSeconds(30));

        HttpResponse<String> lost = send("GET", "/sandboxes/" + running, null);
        assertThat(lost.statusCode()).isEqualTo(404);
        assertThat(lost.body()).contains("was lost").contains("node a");
        assertThat(owners.owner(paused)).contains(new SandboxOwners.Ownership(Optional.empty(), true));
        HttpResponse<String> resumed = send("POST", "/sandboxes/" + paused + "/connect", "{\"timeout\":60}");
        assertThat(resumed.statusCode()).as(resumed.body()).isIn(200, 201);
        assertThat(owner(paused)).contains(new NodeId("b"));

        HttpResponse<String> zombie = a.post("/v2/sandboxes", "{\"templateID\":\"base\"}");
        assertThat(zombie.statusCode()).as("a dead node's writes are refused").isGreaterThanOrEqualTo(500);
        assertThat(a.fenced.await(0, TimeUnit.SECONDS)).isFalse(); // it stopped renewing, so it never heard
    }

    @Test
    void a_gateway_scrape_shows_both_nodes_and_each_node_shows_its_identity() throws Exception {
        drain("b");
        String onA = create();
        undrain("b");
        drain("a");
        String onB = create();
        undrain("a");
        assertThat(send("POST", "/sandboxes/" + onB + "/pause", null).statusCode())
                .isEqualTo(204);
        assertThat(send("GET", "/sandboxes/" + onA, null).statusCode()).isEqualTo(200);

        URI gatewayMetrics = URI.create("http://127.0.0.1:" + gateway.port() + "/metrics");
        // a request is counted once its exchange completed, which may be just after its client read the answer
        await(
                () -> {
                    try {
                        return scrape(gatewayMetrics)
                                .contains("aenv_gateway_requests_total{route=\"sandbox\",status=\"200\"} 1\n");
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                },
                Duration.ofSeconds(10));
        String text = scrape(gatewayMetrics);

        assertThat(text)
                .contains("aenv_gateway_database_up 1\n")
                .contains("aenv_cluster_nodes{state=\"active\"} 2\n")
                .contains("aenv_cluster_nodes{state=\"dead\"} 0\n")
                .contains("aenv_cluster_node_status{node=\"a\",status=\"ready\"} 1\n")
                .contains("aenv_cluster_node_status{node=\"b\",status=\"ready\"} 1\n")
                .contains("aenv_cluster_node_sandboxes{node=\"a\",state=\"running\"} 1\n")
                .contains("aenv_cluster_node_sandboxes{node=\"b\",state=\"paused\"} 1\n")
                .contains("aenv_cluster_node_sandboxes{node=\"b\",state=\"running\"} 0\n")
                .contains("aenv_cluster_node_epoch{node=\"a\"} 1\n")
                .contains("aenv_cluster_node_slots_total{node=\"b\"} ")
                .contains("aenv_cluster_sandboxes_lost 0\n")
                .contains("aenv_gateway_nodes{view=\"accepting\"} 2\n")
                .contains("aenv_gateway_requests_total{route=\"create\",status=\"201\"} 2\n")
                .contains("aenv_gateway_requests_total{route=\"sandbox\",status=\"200\"} 1\n")
                .contains("aenv_gateway_create_placements_total{node=\"a\",status=\"201\"} 1\n")
                .contains("aenv_gateway_create_placements_total{node=\"b\",status=\"201\"} 1\n")
                .contains("aenv_gateway_forward_duration_seconds_count{route=\"sandbox\"} 2\n"); // pause, get
        String nodeA = scrape(a.base.resolve("/metrics"));
        assertThat(nodeA)
                .contains("aenv_node_info{node=\"a\",address=\"" + a.base + "\"} 1\n")
                .contains("aenv_node_epoch{node=\"a\"} 1\n")
                .contains("aenv_node_lease_seconds{node=\"a\"} 3.0\n")
                .contains("aenv_node_lease_renewal_failures_total{node=\"a\"} 0\n")
                .containsPattern("aenv_node_lease_renewed_timestamp_seconds\\{node=\"a\"} 1[0-9]{9}(\\.[0-9]+)?\n");
    }

    private String scrape(URI uri) throws Exception {
        HttpResponse<String> answer = http.send(
                HttpRequest.newBuilder(uri)
                        .timeout(Duration.ofSeconds(30))
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        return answer.body();
    }

    @Test
    void a_node_still_starting_renews_its_lease_and_is_not_declared_dead() throws Exception {
        Path password = dir.resolve("password");
        ClusterConfig config = ServerConfig.load(Map.of(
                        "AENV_HOME", dir.resolve("c").toString(),
                        "AENV_BACKEND", "mock",
                        "AENV_CLUSTER_DATABASE_URL", database.jdbcUrl(),
                        "AENV_CLUSTER_DATABASE_USER", database.user(),
                        "AENV_CLUSTER_DATABASE_PASSWORD_FILE", password.toString(),
                        "AENV_NODE_ID", "c",
                        "AENV_NODE_ADDRESS", "http://127.0.0.1:9",
                        "AENV_CLUSTER_LEASE_SECONDS", "3",
                        "AENV_CLUSTER_DEAD_AFTER_SECONDS", "0"))
                .cluster()
                .orElseThrow();
        // registered, not serving (a backend still starting): a and b sweep with no grace after the lease
        Path leftSpool =
                Files.createDirectories(dir.resolve("c-data/object-spool")).resolve(".pack-left");
        Files.writeString(leftSpool, "what a node stopped while storing a tree left");
        try (ClusterNode starting = ClusterNode.join(config, dir.resolve("c-data"), Clock.systemUTC())) {
            assertThat(leftSpool).as("emptied when the node joins").doesNotExist();
            Thread.sleep(Duration.ofSeconds(3 * 3).toMillis()); // three leases
            JsonNode c = a.parse(send("GET", "/nodes/c", null));
            assertThat(c.path("status").asText()).as(c.toString()).isNotEqualTo("dead");
        }
    }

    private String create() throws Exception {
        HttpResponse<String> created = send("POST", "/v2/sandboxes", "{\"templateID\":\"base\"}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        return a.parse(created).path("sandboxID").asText();
    }

    private Optional<NodeId> owner(String id) {
        return owners.owner(id).flatMap(SandboxOwners.Ownership::node);
    }

    /** The objects in the nodes' shared storage directory. */
    private List<Path> sharedObjects() throws IOException {
        try (Stream<Path> files = Files.walk(dir.resolve("shared"))) {
            return files.filter(Files::isRegularFile).toList();
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }

    private void drain(String node) throws Exception {
        assertThat(send("POST", "/nodes/" + node, "{\"status\":\"draining\"}").statusCode())
                .isEqualTo(204);
    }

    private void undrain(String node) throws Exception {
        assertThat(send("POST", "/nodes/" + node, "{\"status\":\"ready\"}").statusCode())
                .isEqualTo(204);
    }

    private HttpResponse<String> send(String method, String path, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path))
                .timeout(Duration.ofSeconds(30))
                .header("X-API-Key", TestServer.KEY)
                .header("Content-Type", "application/json")
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void await(BooleanSupplier condition, Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not met within " + limit);
            }
            Thread.sleep(100);
        }
    }

    private static int freePort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
