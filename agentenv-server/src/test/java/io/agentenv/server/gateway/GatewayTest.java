package io.agentenv.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentenv.cluster.NodeLoad;
import io.agentenv.cluster.NodeState;
import io.agentenv.server.credentials.ApiKey;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class GatewayTest {
    private static final String KEY = "e2b_0123456789abcdef0123456789abcdef01234567";
    private static final String S1 = "aaaaaaaaaaaaaaaaaaa1";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final NodeLoad ROOMY = new NodeLoad(2, 24_000, 20_000, 0.1, 0, 100, Map.of(), Set.of("base"));

    private final Instant later = Instant.now().plus(Duration.ofHours(1));
    private final FakeCluster cluster = new FakeCluster();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private FakeNode a;
    private FakeNode b;
    private FakeNode c;
    private Gateway gateway;

    @BeforeEach
    void start() throws Exception {
        a = new FakeNode("a");
        b = new FakeNode("b");
        c = new FakeNode("c");
        cluster.node("a", a.address(), NodeState.ACTIVE, later, ROOMY);
        cluster.node("b", b.address(), NodeState.ACTIVE, later, ROOMY);
        cluster.node("c", c.address(), NodeState.DRAINING, later, ROOMY);
        cluster.node("dead", closedPort(), NodeState.DEAD, later, ROOMY);
        cluster.node("silent", closedPort(), NodeState.ACTIVE, Instant.now().minusSeconds(60), ROOMY);
        cluster.owns(S1, Optional.of("b"), false);
        GatewaySettings defaults = GatewaySettings.defaults(
                new InetSocketAddress("127.0.0.1", 0), ApiKey.of(KEY), List.of("sandbox.test"), 1024);
        GatewaySettings settings = new GatewaySettings(
                defaults.listen(),
                defaults.apiKey(),
                defaults.sandboxDomains(),
                defaults.maxConcurrentRequests(),
                defaults.maxCreateBytes(),
                defaults.connectTimeout(),
                defaults.requestTimeout(),
                Duration.ofMinutes(1),
                Duration.ofMinutes(1));
        gateway = Gateway.start(settings, cluster, cluster, cluster, Clock.systemUTC());
    }

    @AfterEach
    void stop() throws Exception {
        gateway.close();
        a.close();
        b.close();
        c.close();
    }

    @Test
    void a_sandbox_s_requests_reach_its_owner_with_the_caller_s_headers_and_host() throws Exception {
        JsonNode info = json(send("GET", "/sandboxes/" + S1, Map.of("X-API-Key", KEY), null));
        assertThat(info.path("node").asText()).isEqualTo("b");
        assertThat(info.path("apiKey").asText()).isEqualTo(KEY);
        assertThat(info.path("forwarded").asText()).contains("for=\"127.0.0.1\"");

        JsonNode logs = json(send("GET", "/v2/sandboxes/" + S1 + "/logs?limit=5", Map.of(), null));
        assertThat(logs.path("node").asText()).isEqualTo("b");
        assertThat(logs.path("path").asText()).isEqualTo("/v2/sandboxes/" + S1 + "/logs");
        assertThat(logs.path("query").asText()).isEqualTo("limit=5");

        JsonNode byHost = json(send("GET", "/files?path=x", Map.of("Host", "49983-" + S1 + ".sandbox.test"), null));
        assertThat(byHost.path("node").asText()).isEqualTo("b");
        assertThat(byHost.path("host").asText()).isEqualTo("49983-" + S1 + ".sandbox.test");

        JsonNode byHeaders = json(
                send("POST", "/process.Process/List", Map.of("E2b-Sandbox-Id", S1, "E2b-Sandbox-Port", "49983"), "{}"));
        assertThat(byHeaders.path("node").asText()).isEqualTo("b");
        assertThat(byHeaders.path("body").asText()).isEqualTo("{}");
        int reads = cluster.ownerReads.get();
        for (int i = 0; i < 5; i++) {
            send("GET", "/proxy/" + S1 + "/49983/health", Map.of(), null);
        }
        assertThat(cluster.ownerReads.get())
                .as("traffic after the first reads the remembered owner")
                .isEqualTo(reads);
    }

    @Test
    void a_create_goes_to_a_node_with_a_warm_sandbox_or_the_template_s_files() throws Exception {
        cluster.node("a", a.address(), NodeState.ACTIVE, later, load(Map.of("tpl", 2), Set.of("base")));
        cluster.node("b", b.address(), NodeState.ACTIVE, later, load(Map.of(), Set.of("base", "built")));
        reload();
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> warm = send("POST", "/sandboxes", Map.of(), "{\"templateID\":\"tpl\"}");
            assertThat(warm.statusCode()).isEqualTo(201);
            assertThat(json(warm).path("node").asText()).isEqualTo("a");
            assertThat(json(warm).path("body").asText()).isEqualTo("{\"templateID\":\"tpl\"}");
            assertThat(json(send("POST", "/sandboxes", Map.of(), "{\"templateID\":\"built\"}"))
                            .path("node")
                            .asText())
                    .isEqualTo("b");
        }
        assertThat(c.requests.get()).as("a draining node takes no creates").isZero();
    }

    @Test
    void a_create_that_mounts_volumes_goes_to_their_node_unless_every_node_shares_them() throws Exception {
        String volumeNode = json(send("GET", "/volumes", Map.of("X-API-Key", KEY), null))
                .path("node")
                .asText();
        String other = volumeNode.equals("a") ? "b" : "a";
        FakeNode volumes = volumeNode.equals("a") ? a : b;
        FakeNode warm = volumeNode.equals("a") ? b : a;
        cluster.node(volumeNode, volumes.address(), NodeState.ACTIVE, later, load(Map.of(), Set.of("base")));
        cluster.node(other, warm.address(), NodeState.ACTIVE, later, load(Map.of("tpl", 2), Set.of("base")));
        reload();
        String create = "{\"templateID\":\"tpl\",\"volumeMounts\":[{\"name\":\"v\",\"path\":\"/data\"}]}";
        for (int i = 0; i < 3; i++) {
            assertThat(json(send("POST", "/sandboxes", Map.of(), create))
                            .path("node")
                            .asText())
                    .as("volumes on one node's disk: the create goes there")
                    .isEqualTo(volumeNode);
        }

        NodeLoad shared = new NodeLoad(2, 24_000, 20_000, 0.1, 0, 100, Map.of(), Set.of("base"), true);
        NodeLoad sharedWarm = new NodeLoad(2, 24_000, 20_000, 0.1, 0, 100, Map.of("tpl", 2), Set.of("base"), true);
        cluster.node(volumeNode, volumes.address(), NodeState.ACTIVE, later, shared);
        cluster.node(other, warm.address(), NodeState.ACTIVE, later, sharedWarm);
        reload();
        for (int i = 0; i < 3; i++) {
            assertThat(json(send("POST", "/sandboxes", Map.of(), create))
                            .path("node")
                            .asText())
                    .as("volumes every node sees: placed like any create (the warm sandbox)")
                    .isEqualTo(other);
        }
    }

    @Test
    void the_first_traffic_of_a_sandbox_the_gateway_created_reads_no_database() throws Exception {
        a.createdId = "createdona0000000000";
        b.createdId = "createdonb0000000000";
        HttpResponse<String> created = send("POST", "/sandboxes", Map.of(), "{\"templateID\":\"tpl\"}");
        assertThat(created.statusCode()).isEqualTo(201);
        String id = json(created).path("sandboxID").asText();
        String node = json(created).path("node").asText();
        int reads = cluster.ownerReads.get();

        JsonNode first = json(
                send("POST", "/process.Process/List", Map.of("E2b-Sandbox-Id", id, "E2b-Sandbox-Port", "49983"), "{}"));

        assertThat(first.path("node").asText()).isEqualTo(node);
        assertThat(cluster.ownerReads.get()).isEqualTo(reads);
    }

    @Test
    void a_create_passes_over_a_full_node_and_one_that_refuses_the_connection() throws Exception {
        cluster.node("gone", closedPort(), NodeState.ACTIVE, later, load(Map.of("tpl", 5), Set.of("tpl")));
        cluster.node("a", a.address(), NodeState.ACTIVE, later, load(Map.of("tpl", 1), Set.of()));
        a.createStatus = 429;
        reload();
        HttpResponse<String> created = send("POST", "/sandboxes", Map.of(), "{\"templateID\":\"tpl\"}");
        assertThat(created.statusCode()).isEqualTo(201);
        assertThat(json(created).path("node").asText()).isEqualTo("b");
        assertThat(a.requests.get()).isEqualTo(1);
    }

    @Test
    void a_node_s_error_reaches_the_caller_unchanged() throws Exception {
        a.createStatus = 400;
        b.createStatus = 400;
        HttpResponse<String> refused = send("POST", "/sandboxes", Map.of(), "{\"templateID\":\"tpl\"}");
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(a.requests.get() + b.requests.get())
                .as("a 400 is not retried elsewhere")
                .isEqualTo(1);
    }

    @Test
    void cluster_wide_requests_go_to_accepting_nodes_only() throws Exception {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 30; i++) {
            seen.add(json(send("GET", "/v2/sandboxes?limit=10", Map.of(), null))
                    .path("node")
                    .asText());
        }
        assertThat(seen).containsExactlyInAnyOrder("a", "b");
    }

    @Test
    void a_template_s_builds_and_files_always_reach_the_same_node() throws Exception {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 10; i++) {
            seen.add(json(send("POST", "/v2/templates/t-1/builds/t-1", Map.of(), "{}"))
                    .path("node")
                    .asText());
            seen.add(json(send("POST", "/templates/t-1/files/abc", Map.of(), "x"))
                    .path("node")
                    .asText());
        }
        assertThat(seen).hasSize(1);
    }

    @Test
    void a_paused_sandbox_whose_node_is_dead_or_draining_resumes_on_an_accepting_node() throws Exception {
        String onDead = "aaaaaaaaaaaaaaaaaaa2";
        String onDraining = "aaaaaaaaaaaaaaaaaaa3";
        String released = "aaaaaaaaaaaaaaaaaaa4";
        cluster.owns(onDead, Optional.of("dead"), true);
        cluster.owns(onDraining, Optional.of("c"), true);
        cluster.owns(released, Optional.empty(), true);
        for (String id : List.of(onDead, onDraining, released)) {
            assertThat(json(send("POST", "/sandboxes/" + id + "/resume", Map.of(), "{}"))
                            .path("node")
                            .asText())
                    .isIn("a", "b");
            assertThat(json(send("POST", "/sandboxes/" + id + "/connect", Map.of(), "{}"))
                            .path("node")
                            .asText())
                    .isIn("a", "b");
        }
        assertThat(json(send("GET", "/sandboxes/" + onDraining, Map.of(), null))
                        .path("node")
                        .asText())
                .as("a draining node still answers for what it holds")
                .isEqualTo("c");
        assertThat(json(send("DELETE", "/sandboxes/" + onDead, Map.of(), null))
                        .path("node")
                        .asText())
                .isIn("a", "b");
    }

    @Test
    void traffic_after_a_connect_or_to_a_paused_sandbox_reads_the_owner_again() throws Exception {
        // the owner cache keeps answers for a minute here; a resume elsewhere changes the owner within it
        for (String node : List.of("a", "b")) {
            String id = "aaaaaaaaaaaaaaaaaa6" + node;
            cluster.owns(id, Optional.of("dead"), true);
            send("GET", "/proxy/" + id + "/49983/health", Map.of(), null); // traffic while it is paused
            send("POST", "/sandboxes/" + id + "/connect", Map.of(), "{}");
            cluster.owns(id, Optional.of(node), false); // what the node that resumed it wrote

            assertThat(json(send("GET", "/proxy/" + id + "/49983/health", Map.of(), null))
                            .path("node")
                            .asText())
                    .isEqualTo(node);
        }
    }

    @Test
    void a_running_sandbox_on_a_node_that_stopped_renewing_is_unavailable() throws Exception {
        String id = "aaaaaaaaaaaaaaaaaaa5";
        cluster.owns(id, Optional.of("silent"), false);
        HttpResponse<String> answer = send("GET", "/sandboxes/" + id, Map.of(), null);
        assertThat(answer.statusCode()).isEqualTo(503);
        assertThat(answer.body()).contains("node silent").contains("not responding");
    }

    @Test
    void a_lost_sandbox_says_why_and_an_unknown_one_is_a_node_s_answer() throws Exception {
        String lost = "aaaaaaaaaaaaaaaaaaa6";
        cluster.lose(lost, "dead");
        HttpResponse<String> answer = send("GET", "/sandboxes/" + lost, Map.of(), null);
        assertThat(answer.statusCode()).isEqualTo(404);
        assertThat(answer.body()).contains("was lost").contains("node dead").contains("lease expired");

        JsonNode unknown = json(send("GET", "/sandboxes/aaaaaaaaaaaaaaaaaaa7", Map.of(), null));
        assertThat(unknown.path("node").asText()).isIn("a", "b");
    }

    @Test
    void sandbox_requests_fail_clearly_while_the_database_is_down() throws Exception {
        cluster.databaseDown = true;
        HttpResponse<String> answer = send("GET", "/sandboxes/aaaaaaaaaaaaaaaaaaa8", Map.of(), null);
        assertThat(answer.statusCode()).isEqualTo(503);
        assertThat(answer.body()).contains("database");
        cluster.databaseDown = false;
        assertThat(json(send("GET", "/sandboxes/" + S1, Map.of(), null))
                        .path("node")
                        .asText())
                .isEqualTo("b");
    }

    @Test
    void node_routes_list_show_drain_and_undrain_with_the_api_key() throws Exception {
        assertThat(send("GET", "/nodes", Map.of(), null).statusCode()).isEqualTo(401);
        assertThat(send("GET", "/nodes", Map.of("X-API-Key", "wrong-key-0123456789"), null)
                        .statusCode())
                .isEqualTo(401);
        JsonNode nodes = json(send("GET", "/nodes", Map.of("X-API-Key", KEY), null));
        Map<String, String> statuses = new java.util.TreeMap<>();
        nodes.forEach(
                n -> statuses.put(n.path("nodeID").asText(), n.path("status").asText()));
        assertThat(statuses)
                .containsEntry("a", "ready")
                .containsEntry("c", "draining")
                .containsEntry("dead", "dead")
                .containsEntry("silent", "unhealthy");

        assertThat(send("POST", "/nodes/a", Map.of("X-API-Key", KEY), "{\"status\":\"draining\"}")
                        .statusCode())
                .isEqualTo(204);
        assertThat(json(send("GET", "/nodes/a", Map.of("X-API-Key", KEY), null))
                        .path("status")
                        .asText())
                .isEqualTo("draining");
        for (int i = 0; i < 5; i++) {
            assertThat(json(send("POST", "/sandboxes", Map.of(), "{\"templateID\":\"base\"}"))
                            .path("node")
                            .asText())
                    .isEqualTo("b");
        }
        assertThat(send("POST", "/nodes/a", Map.of("X-API-Key", KEY), "{\"status\":\"ready\"}")
                        .statusCode())
                .isEqualTo(204);
        assertThat(send("POST", "/nodes/a", Map.of("X-API-Key", KEY), "{\"status\":\"sleeping\"}")
                        .statusCode())
                .isEqualTo(400);
        assertThat(send("POST", "/nodes/nope", Map.of("X-API-Key", KEY), "{\"status\":\"ready\"}")
                        .statusCode())
                .isEqualTo(404);
        assertThat(send("POST", "/nodes/dead", Map.of("X-API-Key", KEY), "{\"status\":\"ready\"}")
                        .statusCode())
                .isEqualTo(409);
        assertThat(send("GET", "/nodes/NOT_AN_ID", Map.of("X-API-Key", KEY), null)
                        .statusCode())
                .isEqualTo(404);
    }

    @Test
    void a_drain_body_is_read_into_the_api_s_record_and_bad_ones_are_400s() throws Exception {
        Map<String, String> key = Map.of("X-API-Key", KEY);
        Map<String, String> refused = new java.util.LinkedHashMap<>();
        refused.put("{\"status\":\"draining\",\"status\":\"ready\"}", "");
        refused.put("{\"status\":\"draining\"} {\"status\":\"ready\"}", "malformed JSON body");
        refused.put("{\"status\":5}", "invalid value for field 'status': expected a string");
        refused.put("{\"status\":true}", "invalid value for field 'status': expected a string");
        refused.put("{}", "status is required");
        refused.put("[\"draining\"]", "request body must be a JSON object");
        refused.put("", "request body is required");
        refused.put("null", "request body must be a JSON object");
        refused.put("{\"status\":\"sleeping\"}", "");
        for (Map.Entry<String, String> body : refused.entrySet()) {
            HttpResponse<String> answer = send("POST", "/nodes/a", key, body.getKey());
            assertThat(answer.statusCode()).as(body.getKey()).isEqualTo(400);
            assertThat(answer.body())
                    .as(body.getKey())
                    .contains(body.getValue())
                    .contains("the body must be {\\\"status\\\": \\\"draining\\\"}");
        }
        assertThat(json(send("GET", "/nodes/a", key, null)).path("status").asText())
                .isEqualTo("ready");
        assertThat(send("POST", "/nodes/a", key, "{\"status\":\"draining\",\"reason\":\"kernel update\"}")
                        .statusCode())
                .as("unknown fields are ignored, as the API does")
                .isEqualTo(204);
        assertThat(json(send("GET", "/nodes/a", key, null)).path("status").asText())
                .isEqualTo("draining");
    }

    @Test
    void metrics_show_the_cluster_s_census_and_the_gateway_s_traffic() throws Exception {
        cluster.owns("aaaaaaaaaaaaaaaaaaa2", Optional.of("silent"), false);
        cluster.owns("aaaaaaaaaaaaaaaaaaa3", Optional.empty(), true);
        cluster.lose("aaaaaaaaaaaaaaaaaaa4", "dead");
        assertThat(send("GET", "/sandboxes/" + S1, Map.of("X-API-Key", KEY), null)
                        .statusCode())
                .isEqualTo(200);
        assertThat(send("GET", "/sandboxes/aaaaaaaaaaaaaaaaaaa2", Map.of(), null)
                        .statusCode())
                .isEqualTo(503);
        assertThat(send("POST", "/sandboxes", Map.of(), "{\"templateID\":\"base\"}")
                        .statusCode())
                .isEqualTo(201);
        // a request is counted once its exchange completed, which may be just after its client read the answer
        scrapeOnce("aenv_gateway_requests_total{route=\"create\",status=\"201\"} 1\n");
        int censusReads = cluster.censusReads.get();

        HttpResponse<String> scrape = send("GET", "/metrics", Map.of(), null);

        assertThat(scrape.statusCode()).as("no key needed, as a node's").isEqualTo(200);
        assertThat(scrape.headers().firstValue("Content-Type")).contains("text/plain; version=0.0.4; charset=utf-8");
        assertThat(cluster.censusReads.get() - censusReads)
                .as("one census read per scrape")
                .isEqualTo(1);
        assertThat(scrape.body())
                .contains("aenv_gateway_database_up 1\n")
                .contains("aenv_cluster_nodes{state=\"active\"} 3\n")
                .contains("aenv_cluster_nodes{state=\"draining\"} 1\n")
                .contains("aenv_cluster_nodes{state=\"dead\"} 1\n")
                .contains("aenv_cluster_node_status{node=\"silent\",status=\"unhealthy\"} 1\n")
                .contains("aenv_cluster_node_status{node=\"c\",status=\"draining\"} 1\n")
                .contains("aenv_cluster_node_slots_total{node=\"a\"} 100\n")
                .contains("aenv_cluster_node_slots_free{node=\"a\"} 100\n")
                .contains("aenv_cluster_node_memory_total_bytes{node=\"a\"} " + (24_000L << 20) + "\n")
                .contains("aenv_cluster_node_memory_available_bytes{node=\"a\"} " + (20_000L << 20) + "\n")
                .contains("aenv_cluster_node_load1{node=\"a\"} 0.1\n")
                .contains("aenv_cluster_node_sandboxes{node=\"b\",state=\"running\"} 1\n")
                .contains("aenv_cluster_node_sandboxes{node=\"a\",state=\"paused\"} 0\n")
                .contains("aenv_cluster_sandboxes_unowned 1\n")
                .contains("aenv_cluster_sandboxes_lost 1\n")
                .contains("aenv_gateway_nodes{view=\"accepting\"} 2\n")
                .contains("aenv_gateway_nodes{view=\"serving\"} 3\n")
                .contains("aenv_gateway_requests_total{route=\"sandbox\",status=\"200\"} 1\n")
                .contains("aenv_gateway_requests_total{route=\"sandbox\",status=\"503\"} 1\n")
                .contains("aenv_gateway_requests_total{route=\"create\",status=\"201\"} 1\n")
                .contains("aenv_gateway_forward_duration_seconds_count{route=\"sandbox\"} 1\n")
                .contains("aenv_gateway_forward_duration_seconds_count{route=\"create\"} 1\n")
                .contains("aenv_gateway_upstream_failures_total{node=\"silent\",status=\"503\"} 1\n")
                .containsPattern("aenv_gateway_create_placements_total\\{node=\"[ab]\",status=\"201\"} 1\n")
                .doesNotContain("aenv_cluster_node_slots_total{node=\"dead\"}");

        cluster.databaseDown = true;
        HttpResponse<String> blind = send("GET", "/metrics", Map.of(), null);
        assertThat(blind.statusCode()).isEqualTo(200);
        assertThat(blind.body())
                .contains("aenv_gateway_database_up 0\n")
                .containsPattern("aenv_gateway_requests_total\\{route=\"metrics\",status=\"200\"} [1-9]")
                .doesNotContain("aenv_cluster_nodes{");
    }

    @Test
    void many_sandboxes_metrics_ask_each_owner_and_merge_the_answers() throws Exception {
        String onA = "aaaaaaaaaaaaaaaaaaa5";
        String onC = "aaaaaaaaaaaaaaaaaaa6";
        cluster.owns(onA, Optional.of("a"), false);
        cluster.owns(onC, Optional.of("c"), true);
        String ids = S1 + "," + onA + ",nosuchsandbox00000000&sandbox_ids=" + onC;

        JsonNode merged = json(send("GET", "/sandboxes/metrics?sandbox_ids=" + ids, Map.of("X-API-Key", KEY), null));

        assertThat(merged.path("sandboxes").size()).isEqualTo(3);
        assertThat(merged.path("sandboxes").path(S1).path("node").asText()).isEqualTo("b");
        assertThat(merged.path("sandboxes").path(S1).path("asked").asText()).isEqualTo(S1);
        assertThat(merged.path("sandboxes").path(onA).path("node").asText()).isEqualTo("a");
        assertThat(merged.path("sandboxes").path(onC).path("node").asText()).isEqualTo("c");

        b.metricsStatus = 500;
        HttpResponse<String> failed =
                send("GET", "/sandboxes/metrics?sandbox_ids=" + ids, Map.of("X-API-Key", KEY), null);
        assertThat(failed.statusCode()).isEqualTo(502);
        assertThat(failed.body()).contains("node b").contains(S1);
        b.metricsStatus = 401;
        HttpResponse<String> refused =
                send("GET", "/sandboxes/metrics?sandbox_ids=" + ids, Map.of("X-API-Key", KEY), null);
        assertThat(refused.statusCode()).as("a node's own refusal is relayed").isEqualTo(401);
        cluster.owns(onA, Optional.of("silent"), false);
        HttpResponse<String> silent =
                send("GET", "/sandboxes/metrics?sandbox_ids=" + onA, Map.of("X-API-Key", KEY), null);
        assertThat(silent.statusCode()).isEqualTo(503);
        assertThat(silent.body()).contains("node silent");
    }

    @Test
    void a_signed_files_url_reaches_the_owner_of_the_sandbox_that_signed_it() throws Exception {
        String seed = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
        cluster.tokenSeed = seed;
        String onC = "aaaaaaaaaaaaaaaaaaa7";
        cluster.owns(onC, Optional.of("c"), false); // c drains: never "any node"
        String token = new io.agentenv.server.credentials.SandboxTokens(seed).envdAccessToken(onC);
        String signature = "v1_"
                + java.util.Base64.getEncoder()
                        .withoutPadding()
                        .encodeToString(java.security.MessageDigest.getInstance("SHA-256")
                                .digest(("/home/user/a.txt:read:user:" + token).getBytes(StandardCharsets.UTF_8)));
        String query = "path=%2Fhome%2Fuser%2Fa.txt&username=user&signature="
                + java.net.URLEncoder.encode(signature, StandardCharsets.UTF_8);

        JsonNode read = json(send("GET", "/files?" + query, Map.of(), null));

        assertThat(read.path("node").asText()).isEqualTo("c");
        assertThat(read.path("query").asText()).isEqualTo(query);
        HttpResponse<String> write = send("POST", "/files?" + query, Map.of(), "x");
        assertThat(json(write).path("node").asText())
                .as("signed for reading only: no sandbox signed a write, so any node answers it")
                .isIn("a", "b");
        cluster.owns(onC, Optional.of("silent"), false);
        assertThat(send("GET", "/files?" + query, Map.of(), null).statusCode()).isEqualTo(503);
    }

    @Test
    void a_stream_passes_through_as_the_node_writes_it() throws Exception {
        HttpRequest request = HttpRequest.newBuilder(uri("/proxy/" + S1 + "/49983/stream"))
                .GET()
                .build();
        HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
        try (BufferedReader lines =
                new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            assertThat(lines.readLine()).isEqualTo("first");
            b.release();
            assertThat(lines.readLine()).isEqualTo("second");
        }
    }

    @Test
    void a_web_socket_is_relayed_to_the_owner() throws Exception {
        CompletableFuture<String> echoed = new CompletableFuture<>();
        WebSocket socket = http.newWebSocketBuilder()
                .buildAsync(
                        URI.create("ws://127.0.0.1:" + gateway.port() + "/proxy/" + S1 + "/8080/ws"),
                        new WebSocket.Listener() {
                            @Override
                            public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
                                echoed.complete(data.toString());
                                return null;
                            }
                        })
                .get(5, TimeUnit.SECONDS);
        socket.sendText("hello", true).get(5, TimeUnit.SECONDS);
        assertThat(echoed.get(5, TimeUnit.SECONDS)).isEqualTo("b:hello");
        socket.sendClose(WebSocket.NORMAL_CLOSURE, "").get(5, TimeUnit.SECONDS);
    }

    @Test
    void health_answers_while_a_node_serves() throws Exception {
        assertThat(send("GET", "/health", Map.of(), null).statusCode()).isEqualTo(204);
    }

    private static NodeLoad load(Map<String, Integer> pool, Set<String> templates) {
        return new NodeLoad(2, 24_000, 20_000, 0.1, 0, 100, pool, templates);
    }

    private void reload() throws Exception {
        // the node list is read again after a drain; the test's changes are made visible the same way
        assertThat(send("POST", "/nodes/b", Map.of("X-API-Key", KEY), "{\"status\":\"ready\"}")
                        .statusCode())
                .isEqualTo(204);
    }

    /** Scrapes until {@code line} shows (bounded), for counts made as an exchange completes. */
    private void scrapeOnce(String line) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!send("GET", "/metrics", Map.of(), null).body().contains(line)) {
            assertThat(System.nanoTime()).as("waiting for " + line).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    private HttpResponse<String> send(String method, String path, Map<String, String> headers, String body)
            throws Exception {
        Map<String, String> rest = new java.util.HashMap<>(headers);
        String host = rest.remove("Host");
        HttpClient client = http;
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(path))
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        rest.forEach(request::header);
        if (host != null) {
            return sendWithHost(method, path, host, rest);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The JDK client refuses to set Host: a raw HTTP/1.1 request on a socket does. */
    private HttpResponse<String> sendWithHost(String method, String path, String host, Map<String, String> headers)
            throws Exception {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", gateway.port())) {
            StringBuilder head = new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\n");
            headers.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
            head.append("Connection: close\r\n\r\n");
            socket.getOutputStream().write(head.toString().getBytes(StandardCharsets.US_ASCII));
            String raw = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int status = Integer.parseInt(raw.substring(9, 12));
            String payload = raw.substring(raw.indexOf("\r\n\r\n") + 4);
            return new StringResponse(status, payload);
        }
    }

    private record StringResponse(int statusCode, String body) implements HttpResponse<String> {
        @Override
        public HttpRequest request() {
            return null;
        }

        @Override
        public Optional<HttpResponse<String>> previousResponse() {
            return Optional.empty();
        }

        @Override
        public java.net.http.HttpHeaders headers() {
            return java.net.http.HttpHeaders.of(Map.of(), (a, b) -> true);
        }

        @Override
        public Optional<javax.net.ssl.SSLSession> sslSession() {
            return Optional.empty();
        }

        @Override
        public URI uri() {
            return null;
        }

        @Override
        public HttpClient.Version version() {
            return HttpClient.Version.HTTP_1_1;
        }
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + gateway.port() + path);
    }

    private static JsonNode json(HttpResponse<String> response) throws Exception {
        assertThat(response.statusCode()).as(response.body()).isLessThan(300);
        return JSON.readTree(response.body());
    }

    /** A loopback address nothing listens on. */
    private static URI closedPort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return URI.create("http://127.0.0.1:" + socket.getLocalPort());
        }
    }
}
