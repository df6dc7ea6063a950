package io.agentenv.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentenv.orchestrator.SandboxRecord;
import io.agentenv.orchestrator.TimeoutAction;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxId;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every request field of E2B's schema is honoured or refused with 400 naming it (docs/architecture.md, "Request
 * fields"); absent, null and empty values ask for nothing and are accepted.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class RequestFieldsTest {
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

    private SandboxRecord record(String id) {
        return server.store.get(new SandboxId(id)).orElseThrow();
    }

    private String created(HttpResponse<String> response) throws Exception {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return server.parse(response).get("sandboxID").asText();
    }

    /** The answer is 400 with the envelope, and its message names {@code field}. */
    private void refused(HttpResponse<String> response, String field) throws Exception {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
        JsonNode body = server.parse(response);
        assertThat(body.get("code").asInt()).isEqualTo(400);
        assertThat(body.get("message").asText()).contains(field);
    }

    @Test
    void v1_create_honours_auto_pause_memory_as_v2_does() throws Exception {
        for (String route : new String[] {"/sandboxes", "/v2/sandboxes"}) {
            String withoutMemory = created(
                    server.post(route, "{\"templateID\":\"base\",\"autoPause\":true,\"autoPauseMemory\":false}"));
            assertThat(record(withoutMemory).onTimeout()).isEqualTo(TimeoutAction.PAUSE);
            assertThat(record(withoutMemory).timeoutPauseMode()).as(route).isEqualTo(PauseMode.FILESYSTEM_ONLY);

            String withMemory = created(server.post(route, "{\"templateID\":\"base\",\"autoPause\":true}"));
            assertThat(record(withMemory).timeoutPauseMode()).as(route).isEqualTo(PauseMode.WITH_MEMORY);
        }
    }

    @Test
    void auto_pause_without_memory_cannot_be_combined_with_auto_resume() throws Exception {
        refused(
                server.post(
                        "/sandboxes",
                        "{\"templateID\":\"base\",\"autoPause\":true,\"autoPauseMemory\":false,"
                                + "\"autoResume\":{\"enabled\":true}}"),
                "autoPauseMemory");
    }

    @Test
    void create_refuses_mcp_iam_tokens_and_unknown_volumes_on_both_routes() throws Exception {
        for (String route : new String[] {"/sandboxes", "/v2/sandboxes"}) {
            refused(server.post(route, "{\"templateID\":\"base\",\"mcp\":{\"github\":{}}}"), "mcp");
            refused(
                    server.post(
                            route,
                            "{\"templateID\":\"base\",\"iam\":{\"tokens\":{\"t\":"
                                    + "{\"audience\":\"a\",\"tokenType\":\"jwt\"}}}}"),
                    "iam.tokens");
            refused(
                    server.post(
                            route, "{\"templateID\":\"base\",\"volumeMounts\":[{\"name\":\"v\",\"path\":\"/data\"}]}"),
                    "volume v not found");
        }
        assertThat(server.orchestrator
                        .list(io.agentenv.orchestrator.SandboxQuery.all(100))
                        .items())
                .isEmpty();
    }

    @Test
    void create_refuses_egress_proxy_transform_rules_and_https_ports() throws Exception {
        refused(
                server.post(
                        "/v2/sandboxes",
                        "{\"templateID\":\"base\",\"network\":{\"egressProxy\":" + "{\"address\":\"proxy:1080\"}}}"),
                "network.egressProxy");
        refused(
                server.post(
                        "/sandboxes",
                        "{\"templateID\":\"base\",\"network\":{\"rules\":{\"api.example.com\":"
                                + "[{\"transform\":{\"headers\":{\"a\":\"b\"}}}]}}}"),
                "network.rules");
        refused(
                server.post("/v2/sandboxes", "{\"templateID\":\"base\",\"network\":{\"httpsPorts\":[8443]}}"),
                "network.httpsPorts");
    }

    @Test
    void null_empty_and_unknown_fields_ask_for_nothing_and_are_accepted() throws Exception {
        created(
                server.post(
                        "/v2/sandboxes",
                        "{\"templateID\":\"base\",\"mcp\":null,\"iam\":{},\"volumeMounts\":[],"
                                + "\"network\":{\"egressProxy\":null,\"rules\":{},\"httpsPorts\":[]},\"someNewerField\":{\"x\":1}}"));
        created(server.post(
                "/sandboxes",
                "{\"templateID\":\"base\",\"mcp\":{},\"iam\":{\"tokens\":{}}," + "\"volumeMounts\":null}"));
    }

    @Test
    void the_host_mask_is_kept_reported_and_checked() throws Exception {
        String id = created(server.post(
                "/v2/sandboxes",
                "{\"templateID\":\"base\",\"network\":{\"maskRequestHost\":\"${PORT}-app.example.com\"}}"));
        assertThat(record(id).maskRequestHost()).contains("${PORT}-app.example.com");
        assertThat(server.parse(server.get("/sandboxes/" + id))
                        .get("network")
                        .get("maskRequestHost")
                        .asText())
                .isEqualTo("${PORT}-app.example.com");
        created(server.post("/sandboxes", "{\"templateID\":\"base\",\"network\":{\"maskRequestHost\":\"\"}}"));
        for (String bad : new String[] {"a b", "host/path", "user@host", "host:port", "${HOST}", "x\\u0000y"}) {
            refused(
                    server.post(
                            "/v2/sandboxes",
                            "{\"templateID\":\"base\",\"network\":{\"maskRequestHost\":\"" + bad + "\"}}"),
                    "network.maskRequestHost");
        }
    }

    @Test
    void the_host_mask_of_a_paused_sandbox_survives_a_server_restart() throws Exception {
        String id = created(server.post(
                "/sandboxes", "{\"templateID\":\"base\",\"network\":{\"maskRequestHost\":\"localhost:${PORT}\"}}"));
        assertThat(server.post("/sandboxes/" + id + "/pause", "{}").statusCode())
                .isEqualTo(204);
        server.close();
        server = new TestServer(dataDir);
        JsonNode detail = server.parse(server.get("/sandboxes/" + id));
        assertThat(detail.get("state").asText()).isEqualTo("paused");
        assertThat(detail.get("network").get("maskRequestHost").asText()).isEqualTo("localhost:${PORT}");
        assertThat(server.orchestrator.route(new SandboxId(id)).maskRequestHost())
                .contains("localhost:${PORT}");
    }

    @Test
    void network_update_refuses_egress_proxy_and_rules() throws Exception {
        String id = server.create();
        refused(
                server.put("/sandboxes/" + id + "/network", "{\"egressProxy\":{\"address\":\"proxy:1080\"}}"),
                "egressProxy");
        refused(server.put("/sandboxes/" + id + "/network", "{\"rules\":{\"a.example.com\":[{}]}}"), "rules");
        assertThat(server.put("/sandboxes/" + id + "/network", "{\"rules\":{},\"allowOut\":[\"1.1.1.1\"]}")
                        .statusCode())
                .isEqualTo(204);
    }

    @Test
    void connect_and_resume_refuse_a_disk_only_resume_and_resume_refuses_auto_pause() throws Exception {
        String id = server.create();
        assertThat(server.post("/sandboxes/" + id + "/pause", "{}").statusCode())
                .isEqualTo(204);
        refused(server.post("/v2/sandboxes/" + id + "/connect", "{\"timeout\":60,\"memory\":false}"), "memory");
        refused(server.post("/sandboxes/" + id + "/connect", "{\"memory\":false}"), "memory");
        refused(server.post("/sandboxes/" + id + "/resume", "{\"memory\":false}"), "memory");
        refused(server.post("/sandboxes/" + id + "/resume", "{\"autoPause\":true}"), "autoPause");
        assertThat(server.parse(server.get("/sandboxes/" + id)).get("state").asText())
                .isEqualTo("paused");
        assertThat(server.post("/v2/sandboxes/" + id + "/connect", "{\"timeout\":60,\"memory\":true}")
                        .statusCode())
                .isEqualTo(201);
    }
}
