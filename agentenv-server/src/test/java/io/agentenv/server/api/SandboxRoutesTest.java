package io.agentenv.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentenv.backend.mock.Gate;
import io.agentenv.backend.mock.MockAction;
import io.agentenv.backend.mock.MockOp;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every sandbox route's success and error statuses, over real HTTP against the real orchestrator. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SandboxRoutesTest {
    private static final String MISSING = "zzzzzzzzzzzzzzzzzzzz";

    @TempDir
    Path dataDir;

    private TestServer server;

    @BeforeEach
    void start() throws Exception {
        server = new TestServer(dataDir);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    private int code(HttpResponse<String> response) throws Exception {
        assertThat(response.statusCode()).as(response.body()).isBetween(400, 599);
        int code = server.parse(response).get("code").asInt();
        assertThat(code).isEqualTo(response.statusCode());
        return code;
    }

    private static Duration ttl(JsonNode detail) {
        return Duration.between(
                Instant.parse(detail.get("startedAt").asText()),
                Instant.parse(detail.get("endAt").asText()));
    }

    @Test
    void v2_create_answers_201_with_the_sandbox_the_id_header_and_an_envd_token() throws Exception {
        HttpResponse<String> response = server.post(
                "/v2/sandboxes", "{\"templateID\":\"base\",\"metadata\":{\"a\":\"b\"},\"envVars\":{\"FOO\":\"bar\"}}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        JsonNode body = server.parse(response);
        String id = body.get("sandboxID").asText();
        assertThat(id).matches("[a-z0-9]{20}");
        assertThat(response.headers().firstValue("x-agentenv-sandbox-id")).contains(id);
        assertThat(body.get("templateID").asText()).isEqualTo("base");
        assertThat(body.get("envdVersion").asText()).isEqualTo("0.6.13");
        assertThat(body.get("envdAccessToken").asText()).isEqualTo(server.tokens.envdAccessToken(id));
        assertThat(body.get("clientID").asText()).isEmpty();
        assertThat(body.has("domain")).isTrue();
        assertThat(body.get("trafficAccessToken").isNull()).isTrue();
        // default v2 TTL: 300 s
        assertThat(ttl(server.parse(server.get("/sandboxes/" + id))))
                .isBetween(Duration.ofSeconds(299), Duration.ofSeconds(301));
    }

    @Test
    void a_create_whose_guest_agent_never_gets_healthy_is_a_clear_502_leaving_nothing() throws Exception {
        server.backend.script(
                MockOp.START,
                MockAction.fail(new BackendException.Terminal(
                        "envd of sandbox x was not healthy after 60 probes",
                        new EnvdException.Unreachable("timeout"))));
        HttpResponse<String> response = server.post("/v2/sandboxes", "{\"templateID\":\"base\"}");
        assertThat(code(response)).isEqualTo(502);
        assertThat(server.parse(response).get("message").asText())
                .matches(
                        "sandbox [a-z0-9]{20} could not be started: its guest agent \\(envd\\) did not become ready within \\d+ s");
        assertThat(server.parse(server.get("/v2/sandboxes?state=running,paused"))
                        .size())
                .isZero();
        assertThat(server.backend.openInstances()).isEmpty();
    }

    @Test
    void without_a_configured_domain_sandboxes_are_under_localhost_and_the_servers_port() throws Exception {
        String domain = "localhost:" + server.api.port();
        HttpResponse<String> v1 = server.post("/sandboxes", "{\"templateID\":\"base\"}");
        assertThat(server.parse(v1).get("domain").asText()).isEqualTo(domain);
        String id = server.create();
        assertThat(server.parse(server.get("/sandboxes/" + id)).get("domain").asText())
                .isEqualTo(domain);
        assertThat(server.parse(server.post("/v2/sandboxes/" + id + "/connect", "{}"))
                        .get("domain")
                        .asText())
                .isEqualTo(domain);
    }

    @Test
    void a_configured_domain_is_reported_as_it_is() throws Exception {
        try (TestServer configured = new TestServer(
                dataDir.resolve("configured"), java.util.Map.of("AENV_SANDBOX_DOMAIN", "sandbox.example.com"))) {
            String id = configured.create();
            assertThat(configured
                            .parse(configured.get("/sandboxes/" + id))
                            .get("domain")
                            .asText())
                    .isEqualTo("sandbox.example.com");
        }
    }

    @Test
    void v1_create_defaults_to_a_fifteen_second_ttl() throws Exception {
        HttpResponse<String> response = server.post("/sandboxes", "{\"templateID\":\"base\",\"secure\":true}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        String id = server.parse(response).get("sandboxID").asText();
        assertThat(response.headers().firstValue("x-agentenv-sandbox-id")).contains(id);
        assertThat(ttl(server.parse(server.get("/sandboxes/" + id))))
                .isBetween(Duration.ofSeconds(14), Duration.ofSeconds(16));
    }

    @Test
    void private_ingress_gets_a_traffic_token() throws Exception {
        HttpResponse<String> response =
                server.post("/v2/sandboxes", "{\"templateID\":\"base\",\"network\":{\"allowPublicTraffic\":false}}");
        JsonNode body = server.parse(response);
        String id = body.get("sandboxID").asText();
        assertThat(body.get("trafficAccessToken").asText()).isEqualTo(server.tokens.trafficAccessToken(id));
        assertThat(server.parse(server.get("/sandboxes/" + id))
                        .get("network")
                        .get("allowPublicTraffic")
                        .asBoolean())
                .isFalse();
    }

    @Test
    void create_with_an_unknown_or_malformed_template_is_400() throws Exception {
        assertThat(code(server.post("/v2/sandboxes", "{\"templateID\":\"nope\"}")))
                .isEqualTo(400);
        assertThat(code(server.post("/v2/sandboxes", "{\"templateID\":\"../etc\"}")))
                .isEqualTo(400);
        assertThat(code(server.post("/v2/sandboxes", "{\"timeout\":10}"))).isEqualTo(400);
        assertThat(code(server.post("/v2/sandboxes", "{\"templateID\":\"base\",\"timeout\":-1}")))
                .isEqualTo(400);
    }

    @Test
    void create_with_bad_network_entries_or_extension_params_is_400() throws Exception {
        assertThat(code(server.post(
                        "/v2/sandboxes", "{\"templateID\":\"base\",\"network\":{\"allowOut\":[\"not an ip\"]}}")))
                .isEqualTo(400);
        assertThat(code(server.post("/v2/sandboxes", "{\"templateID\":\"base\",\"customExtensionParams\":{\"a\":1}}")))
                .isEqualTo(400);
    }

    @Test
    void get_returns_the_detail_with_camel_case_internet_access_and_lifecycle() throws Exception {
        String id = server.create(
                "{\"templateID\":\"base\",\"allow_internet_access\":false,\"autoPause\":true,\"metadata\":{\"k\":\"v\"}}");
        HttpResponse<String> response = server.get("/sandboxes/" + id);
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode detail = server.parse(response);
        assertThat(detail.get("sandboxID").asText()).isEqualTo(id);
        assertThat(detail.get("state").asText()).isEqualTo("running");
        assertThat(detail.get("allowInternetAccess").asBoolean()).isFalse();
        assertThat(detail.get("lifecycle").get("onTimeout").asText()).isEqualTo("pause");
        assertThat(detail.get("metadata").get("k").asText()).isEqualTo("v");
        assertThat(detail.get("cpuCount").asInt()).isEqualTo(2);
        assertThat(detail.get("memoryMB").asInt()).isEqualTo(512);
        assertThat(detail.get("diskSizeMB").asInt()).isEqualTo(1024);
    }

    @Test
    void get_of_a_missing_or_malformed_id_is_404() throws Exception {
        assertThat(code(server.get("/sandboxes/" + MISSING))).isEqualTo(404);
        assertThat(code(server.get("/sandboxes/NOT-AN-ID"))).isEqualTo(404);
    }

    @Test
    void kill_answers_204_then_404() throws Exception {
        String id = server.create();
        HttpResponse<String> first = server.delete("/sandboxes/" + id);
        assertThat(first.statusCode()).isEqualTo(204);
        assertThat(first.body()).isEmpty();
        assertThat(code(server.delete("/sandboxes/" + id))).isEqualTo(404);
        assertThat(code(server.get("/sandboxes/" + id))).isEqualTo(404);
    }

    @Test
    void pause_answers_204_then_409_and_the_sandbox_reads_as_paused() throws Exception {
        String id = server.create();
        assertThat(server.post("/sandboxes/" + id + "/pause", "{}").statusCode())
                .isEqualTo(204);
        assertThat(code(server.post("/sandboxes/" + id + "/pause", "{\"memory\":true}")))
                .isEqualTo(409);
        assertThat(server.parse(server.get("/sandboxes/" + id)).get("state").asText())
                .isEqualTo("paused");
        assertThat(code(server.post("/sandboxes/" + MISSING + "/pause", ""))).isEqualTo(404);
    }

    @Test
    void connect_resumes_a_paused_sandbox_with_201_and_answers_200_when_running() throws Exception {
        String id = server.create();
        assertThat(server.post("/sandboxes/" + id + "/pause", "").statusCode()).isEqualTo(204);

        HttpResponse<String> resumed = server.post("/v2/sandboxes/" + id + "/connect", "{\"timeout\":120}");
        assertThat(resumed.statusCode()).as(resumed.body()).isEqualTo(201);
        assertThat(server.parse(resumed).get("sandboxID").asText()).isEqualTo(id);
        assertThat(server.parse(resumed).get("envdAccessToken").asText()).isEqualTo(server.tokens.envdAccessToken(id));

        HttpResponse<String> running = server.post("/sandboxes/" + id + "/connect", "{\"timeout\":60}");
        assertThat(running.statusCode()).isEqualTo(200);
        // connect only extends: the 120 s TTL set on resume is not shortened to 60 s
        assertThat(ttlFromNow(id)).isGreaterThan(Duration.ofSeconds(100));

        assertThat(code(server.post("/v2/sandboxes/" + MISSING + "/connect", "{}")))
                .isEqualTo(404);
    }

    /** The time from now to the end the list and the detail report for {@code id} (the same end in both). */
    private Duration endsIn(String id) throws Exception {
        JsonNode listed = null;
        for (JsonNode item : server.parse(server.get("/v2/sandboxes"))) {
            if (item.get("sandboxID").asText().equals(id)) {
                listed = item;
            }
        }
        assertThat(listed).as("listed").isNotNull();
        JsonNode detail = server.parse(server.get("/sandboxes/" + id));
        assertThat(detail.get("state").asText()).isEqualTo("running");
        Instant end = Instant.parse(detail.get("endAt").asText());
        assertThat(Duration.between(Instant.parse(listed.get("endAt").asText()), end))
                .isBetween(Duration.ofSeconds(-5), Duration.ofSeconds(5));
        return Duration.between(Instant.now(), end);
    }

    @Test
    void a_sandbox_still_starting_reports_an_end_one_timeout_away() throws Exception {
        // given a create held in the backend's start: the sandbox is listed (running) but not started yet
        Gate start = server.backend.holdNext(MockOp.START);
        CompletableFuture<HttpResponse<String>> create = server.http.sendAsync(
                server.request("/v2/sandboxes")
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"templateID\":\"base\",\"timeout\":120}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        start.awaitEntered(Duration.ofSeconds(10));
        String id;
        Duration left;
        try {
            JsonNode listed = server.parse(server.get("/v2/sandboxes"));
            assertThat(listed).hasSize(1);
            id = listed.get(0).get("sandboxID").asText();
            left = endsIn(id);
        } finally {
            start.release();
        }
        // then its end is its timeout from now (the TTL starts when it runs), not a century away
        assertThat(left).isBetween(Duration.ofSeconds(100), Duration.ofSeconds(121));
        assertThat(create.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
        assertThat(endsIn(id)).isBetween(Duration.ofSeconds(100), Duration.ofSeconds(121));
    }

    @Test
    void a_sandbox_still_resuming_reports_an_end_one_timeout_away() throws Exception {
        String id = server.create("{\"templateID\":\"base\",\"timeout\":120}");
        assertThat(server.post("/sandboxes/" + id + "/pause", "").statusCode()).isEqualTo(204);
        // given a resume held in the backend's start: the sandbox reads as running already
        Gate start = server.backend.holdNext(MockOp.START);
        CompletableFuture<HttpResponse<String>> resume = server.http.sendAsync(
                server.request("/v2/sandboxes/" + id + "/connect")
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"timeout\":120}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        start.awaitEntered(Duration.ofSeconds(10));
        Duration left;
        try {
            left = endsIn(id);
        } finally {
            start.release();
        }
        assertThat(left).isBetween(Duration.ofSeconds(100), Duration.ofSeconds(121));
        assertThat(resume.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
    }

    private Duration ttlFromNow(String id) throws Exception {
        return Duration.between(
                Instant.now(),
                Instant.parse(server.parse(server.get("/sandboxes/" + id))
                        .get("endAt")
                        .asText()));
    }

    @Test
    void the_deprecated_resume_route_resumes_with_201() throws Exception {
        String id = server.create();
        server.post("/sandboxes/" + id + "/pause", "");
        HttpResponse<String> response = server.post("/sandboxes/" + id + "/resume", "{\"timeout\":30}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        assertThat(server.parse(server.get("/sandboxes/" + id)).get("state").asText())
                .isEqualTo("running");
        assertThat(code(server.post("/sandboxes/" + MISSING + "/resume", "{}"))).isEqualTo(404);
    }

    @Test
    void set_timeout_overwrites_and_may_shorten_while_refresh_only_extends() throws Exception {
        String id = server.create("{\"templateID\":\"base\",\"timeout\":600}");
        assertThat(server.post("/sandboxes/" + id + "/timeout", "{\"timeout\":30}")
                        .statusCode())
                .isEqualTo(204);
        assertThat(ttlFromNow(id)).isLessThanOrEqualTo(Duration.ofSeconds(30));

        assertThat(server.post("/sandboxes/" + id + "/refreshes", "{\"duration\":10}")
                        .statusCode())
                .isEqualTo(204);
        assertThat(ttlFromNow(id)).isGreaterThan(Duration.ofSeconds(20)); // not shortened to 10 s
        assertThat(server.post("/sandboxes/" + id + "/refreshes", "{\"duration\":120}")
                        .statusCode())
                .isEqualTo(204);
        assertThat(ttlFromNow(id)).isGreaterThan(Duration.ofSeconds(100));

        assertThat(code(server.post("/sandboxes/" + id + "/refreshes", "{\"duration\":3601}")))
                .isEqualTo(400);
        assertThat(code(server.post("/sandboxes/" + MISSING + "/timeout", "{\"timeout\":5}")))
                .isEqualTo(404);
        assertThat(code(server.post("/sandboxes/" + MISSING + "/refreshes", "{}")))
                .isEqualTo(404);
    }

    @Test
    void fork_answers_201_with_one_entry_per_child() throws Exception {
        String id = server.create();
        HttpResponse<String> response = server.post("/sandboxes/" + id + "/fork", "{\"count\":2,\"timeout\":60}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        JsonNode children = server.parse(response);
        assertThat(children).hasSize(2);
        for (JsonNode child : children) {
            String childId = child.get("sandbox").get("sandboxID").asText();
            assertThat(childId).isNotEqualTo(id);
            assertThat(child.get("sandbox").get("envdAccessToken").asText())
                    .isEqualTo(server.tokens.envdAccessToken(childId));
        }
        assertThat(code(server.post("/sandboxes/" + id + "/fork", "{\"count\":0}")))
                .isEqualTo(400);
        assertThat(code(server.post("/sandboxes/" + id + "/fork", "{\"count\":101}")))
                .isEqualTo(400);
        assertThat(code(server.post("/sandboxes/" + MISSING + "/fork", ""))).isEqualTo(404);
        server.post("/sandboxes/" + id + "/pause", "");
        assertThat(code(server.post("/sandboxes/" + id + "/fork", "{}"))).isEqualTo(409);
    }

    @Test
    void network_update_answers_204_and_rejects_bad_entries_with_400() throws Exception {
        String id = server.create();
        assertThat(server.put(
                                "/sandboxes/" + id + "/network",
                                "{\"allowOut\":[\"10.0.0.0/8\"],\"denyOut\":[\"0.0.0.0/0\"],\"allow_internet_access\":false}")
                        .statusCode())
                .isEqualTo(204);
        JsonNode detail = server.parse(server.get("/sandboxes/" + id));
        assertThat(detail.get("network").get("allowOut").get(0).asText()).isEqualTo("10.0.0.0/8");
        assertThat(detail.get("allowInternetAccess").asBoolean()).isFalse();
        assertThat(server.put("/sandboxes/" + id + "/network", "").statusCode()).isEqualTo(204); // empty body clears
        assertThat(code(server.put("/sandboxes/" + id + "/network", "{\"allowOut\":[\"example.com\"]}")))
                .isEqualTo(400);
        assertThat(code(server.put("/sandboxes/" + MISSING + "/network", "{}"))).isEqualTo(404);
    }

    @Test
    void extension_params_read_as_empty_and_non_empty_patches_are_400_without_extension() throws Exception {
        String id = server.create();
        HttpResponse<String> get = server.get("/sandboxes/" + id + "/custom-extension-params");
        assertThat(get.statusCode()).isEqualTo(200);
        assertThat(get.body()).isEqualTo("{}");
        HttpResponse<String> empty = server.patch("/sandboxes/" + id + "/custom-extension-params", "{}");
        assertThat(empty.statusCode()).isEqualTo(200);
        assertThat(empty.body()).isEqualTo("{}");
        assertThat(code(server.patch("/sandboxes/" + id + "/custom-extension-params", "{\"a\":1}")))
                .isEqualTo(400);
        assertThat(code(server.patch("/sandboxes/" + id + "/custom-extension-params", "[1]")))
                .isEqualTo(400);
        assertThat(code(server.get("/sandboxes/" + MISSING + "/custom-extension-params")))
                .isEqualTo(404);
    }

    @Test
    void snapshots_are_created_listed_and_deleted_as_templates() throws Exception {
        String id = server.create();
        HttpResponse<String> created = server.post("/sandboxes/" + id + "/snapshots", "{\"name\":\"my-snap\"}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        JsonNode info = server.parse(created);
        String snapshotId = info.get("snapshotID").asText();
        assertThat(info.get("names").get(0).asText()).isEqualTo("my-snap");

        JsonNode listed = server.parse(server.get("/snapshots?sandboxID=" + id));
        assertThat(listed).hasSize(1);
        assertThat(listed.get(0).get("snapshotID").asText()).isEqualTo(snapshotId);
        assertThat(server.parse(server.get("/snapshots?name=team/my-snap:latest")))
                .hasSize(1);

        // a sandbox can be created from the snapshot id or its alias
        assertThat(server.post("/v2/sandboxes", "{\"templateID\":\"my-snap\"}").statusCode())
                .isEqualTo(201);

        assertThat(server.delete("/templates/" + snapshotId).statusCode()).isEqualTo(204);
        assertThat(code(server.delete("/templates/" + snapshotId))).isEqualTo(404);
        assertThat(code(server.post("/sandboxes/" + id + "/snapshots", "{\"name\":\"bad name!\"}")))
                .isEqualTo(400);
        assertThat(code(server.post("/sandboxes/" + MISSING + "/snapshots", "{}")))
                .isEqualTo(404);
        assertThat(code(server.get("/snapshots?limit=0"))).isEqualTo(400);
        assertThat(code(server.get("/snapshots?sandboxID=not-an-id"))).isEqualTo(400);
        assertThat(code(server.get("/snapshots?nextToken=garbage"))).isEqualTo(400);
        server.post("/sandboxes/" + id + "/pause", "");
        assertThat(code(server.post("/sandboxes/" + id + "/snapshots", "{}"))).isEqualTo(409);
    }

    @Test
    void operations_that_need_a_running_sandbox_are_409_while_it_is_paused() throws Exception {
        String id = server.create();
        assertThat(server.post("/sandboxes/" + id + "/pause", "").statusCode()).isEqualTo(204);
        assertThat(code(server.put("/sandboxes/" + id + "/network", "{\"allowOut\":[\"10.0.0.0/8\"]}")))
                .isEqualTo(409);
        assertThat(code(server.patch("/sandboxes/" + id + "/custom-extension-params", "{}")))
                .isEqualTo(409);
        assertThat(code(server.post("/sandboxes/" + id + "/fork", "{}"))).isEqualTo(409);
    }
}
