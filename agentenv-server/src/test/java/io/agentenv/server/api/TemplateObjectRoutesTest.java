package io.agentenv.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Built templates as objects over real HTTP: the lists, one template's builds, tags, the alias check, delete. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class TemplateObjectRoutesTest {
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

    private JsonNode ok(HttpResponse<String> response, int status) throws Exception {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        return response.body().isEmpty() ? null : server.parse(response);
    }

    private void assertError(HttpResponse<String> response, int status, String messagePart) throws Exception {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        assertThat(server.parse(response).get("message").asText()).contains(messagePart);
    }

    /** A build of {@code name} (E2B's request body) from base with an ENV step, run to READY; its template and build. */
    private String[] build(String requestBody, String value) throws Exception {
        JsonNode requested = ok(server.post("/v3/templates", requestBody), 202);
        String templateId = requested.get("templateID").asText();
        String buildId = requested.get("buildID").asText();
        ok(
                server.post(
                        "/v2/templates/" + templateId + "/builds/" + buildId,
                        "{\"fromTemplate\":\"base\",\"steps\":[{\"type\":\"ENV\",\"args\":[\"V\",\"" + value
                                + "\"]}]}"),
                204);
        Instant deadline = Instant.now().plusSeconds(30);
        while (true) {
            JsonNode status = ok(server.get("/templates/" + templateId + "/builds/" + buildId + "/status"), 200);
            if (status.get("status").asText().equals("ready")) {
                return new String[] {templateId, buildId};
            }
            assertThat(status.get("status").asText()).as(status.toString()).isNotEqualTo("error");
            assertThat(Instant.now()).as("the build finished").isBefore(deadline);
            Thread.sleep(20);
        }
    }

    private String envOf(String template) throws Exception {
        String sandbox = server.create("{\"templateID\":\"" + template + "\"}");
        return server.store
                .get(new io.agentenv.spi.SandboxId(sandbox))
                .orElseThrow()
                .envVars()
                .get("V");
    }

    private static List<String> texts(JsonNode array, String field) {
        List<String> values = new ArrayList<>();
        array.forEach(n -> values.add(field == null ? n.asText() : n.get(field).asText()));
        return values;
    }

    private HttpResponse<String> deleteWithBody(String path, String body) throws Exception {
        return server.send(server.request(path)
                .header("Content-Type", "application/json")
                .method("DELETE", HttpRequest.BodyPublishers.ofString(body))
                .build());
    }

    @Test
    void the_lists_show_a_built_template_by_its_id_and_name_with_its_latest_build() throws Exception {
        String[] built = build("{\"name\":\"web\",\"cpuCount\":2,\"memoryMB\":1024}", "one");

        for (String path : List.of("/templates", "/v2/templates")) {
            JsonNode list = ok(server.get(path), 200);
            assertThat(texts(list, "templateID")).as(path).containsExactly(built[0], "base");
            JsonNode web = list.get(0);
            assertThat(texts(web.get("names"), null)).containsExactly("web");
            assertThat(texts(web.get("aliases"), null)).containsExactly("web");
            assertThat(web.get("buildID").asText()).isEqualTo(built[1]);
            assertThat(web.get("buildStatus").asText()).isEqualTo("ready");
            assertThat(web.get("buildCount").asInt()).isEqualTo(1);
            assertThat(web.get("cpuCount").asInt()).isEqualTo(2);
            assertThat(web.get("memoryMB").asInt()).isEqualTo(1024);
            assertThat(web.get("createdAt").asText()).isNotEmpty();
        }
        JsonNode first = ok(server.get("/v2/templates?limit=1"), 200);
        assertThat(texts(first, "templateID")).containsExactly(built[0]);
        HttpResponse<String> page = server.get("/v2/templates?limit=1");
        String token = page.headers().firstValue("X-Next-Token").orElseThrow();
        assertThat(texts(ok(server.get("/v2/templates?limit=1&nextToken=" + token), 200), "templateID"))
                .containsExactly("base");
        assertThat(ok(server.get("/templates/aliases/web"), 200)
                        .get("templateID")
                        .asText())
                .isEqualTo(built[0]);
    }

    @Test
    void a_template_lists_its_builds_newest_first_paged_with_a_token() throws Exception {
        String[] first = build("{\"name\":\"app\"}", "one");
        String[] second = build("{\"name\":\"app\"}", "two");
        assertThat(second[0]).isEqualTo(first[0]);

        JsonNode all = ok(server.get("/templates/app"), 200);
        assertThat(all.get("templateID").asText()).isEqualTo(first[0]);
        assertThat(texts(all.get("names"), null)).containsExactly("app");
        assertThat(texts(all.get("builds"), "buildID")).containsExactly(second[1], first[1]);
        assertThat(all.get("builds").get(0).get("status").asText()).isEqualTo("ready");
        assertThat(all.get("builds").get(0).get("finishedAt").asText()).isNotEmpty();
        HttpResponse<String> page = server.get("/templates/" + first[0] + "?limit=1");
        assertThat(texts(ok(page, 200).get("builds"), "buildID")).containsExactly(second[1]);
        String token = page.headers().firstValue("X-Next-Token").orElseThrow();
        HttpResponse<String> rest = server.get("/templates/" + first[0] + "?limit=1&nextToken=" + token);
        assertThat(texts(ok(rest, 200).get("builds"), "buildID")).containsExactly(first[1]);
        assertThat(rest.headers().firstValue("X-Next-Token")).isEmpty();
    }

    @Test
    void tags_are_assigned_listed_moved_and_removed_and_name_tag_creates() throws Exception {
        String[] v1 = build("{\"name\":\"svc:v1\"}", "one");
        String[] v2 = build("{\"name\":\"svc\",\"tags\":[\"v2\"]}", "two");

        JsonNode tags = ok(server.get("/templates/svc/tags"), 200);
        assertThat(texts(tags, "tag")).containsExactly("default", "v1", "v2");
        assertThat(texts(tags, "buildID")).containsExactly(v2[1], v1[1], v2[1]);
        assertThat(tags.get(0).get("createdAt").asText()).isNotEmpty();
        assertThat(envOf("svc:v1")).isEqualTo("one");
        assertThat(envOf("svc")).isEqualTo("two");
        assertThat(ok(server.get("/templates/aliases/svc:v1"), 200)
                        .get("templateID")
                        .asText())
                .isEqualTo(v1[0]);
        assertError(server.get("/templates/aliases/svc:nope"), 404, "tag 'nope' does not exist");

        JsonNode assigned = ok(server.post("/templates/tags", "{\"target\":\"svc:v1\",\"tags\":[\"stable\"]}"), 201);
        assertThat(assigned.get("buildID").asText()).isEqualTo(v1[1]);
        assertThat(texts(assigned.get("tags"), null)).containsExactly("stable");
        ok(server.post("/templates/tags", "{\"target\":\"svc\",\"tags\":[\"v1\"]}"), 201);
        assertThat(envOf("svc:v1")).isEqualTo("two");
        assertThat(envOf("svc:stable")).isEqualTo("one");

        ok(deleteWithBody("/templates/tags", "{\"name\":\"svc\",\"tags\":[\"stable\"]}"), 204);
        assertThat(texts(ok(server.get("/templates/" + v1[0] + "/tags"), 200), "tag"))
                .containsExactly("default", "v1", "v2");
        assertError(server.post("/sandboxes", "{\"templateID\":\"svc:stable\"}"), 400, "no tag or build stable");
        assertError(
                server.post("/templates/tags", "{\"target\":\"svc:" + v1[1] + "\",\"tags\":[\"old\"]}"),
                409,
                "snapshot was deleted");
        assertError(server.post("/templates/tags", "{\"target\":\"svc\",\"tags\":[]}"), 400, "at least one tag");
        assertError(server.post("/templates/tags", "{\"target\":\"nope\",\"tags\":[\"x\"]}"), 404, "not found");
        assertError(deleteWithBody("/templates/tags", "{\"name\":\"svc\",\"tags\":[\"default\"]}"), 400, "default");
        assertError(deleteWithBody("/templates/tags", "{\"name\":\"svc:v1\",\"tags\":[\"v1\"]}"), 400, "tag");
        assertThat(ok(server.get("/templates/base/tags"), 200)).isEmpty();
        assertError(server.get("/templates/nope/tags"), 404, "nope");
    }

    @Test
    void a_template_whose_only_build_failed_is_not_an_alias_yet() throws Exception {
        JsonNode requested = ok(server.post("/v3/templates", "{\"name\":\"failed-first\"}"), 202);
        String templateId = requested.get("templateID").asText();
        String buildId = requested.get("buildID").asText();
        ok(
                server.post(
                        "/v2/templates/" + templateId + "/builds/" + buildId,
                        "{\"fromTemplate\":\"no-such-template\",\"steps\":[]}"),
                204);
        Instant deadline = Instant.now().plusSeconds(30);
        while (!ok(server.get("/templates/" + templateId + "/builds/" + buildId + "/status"), 200)
                .get("status")
                .asText()
                .equals("error")) {
            assertThat(Instant.now()).as("the build failed").isBefore(deadline);
            Thread.sleep(20);
        }

        assertError(server.get("/templates/aliases/failed-first"), 404, "failed-first");
    }

    @Test
    void delete_is_409_while_a_sandbox_of_it_runs_and_then_frees_its_name() throws Exception {
        String[] built = build("{\"name\":\"busy:v1\"}", "one");
        String sandbox = server.create("{\"templateID\":\"busy:v1\"}");

        assertError(server.delete("/templates/busy"), 409, sandbox);
        assertThat(texts(ok(server.get("/templates"), 200), "templateID")).contains(built[0]);

        ok(server.delete("/sandboxes/" + sandbox), 204);
        ok(server.delete("/templates/busy"), 204);

        assertThat(texts(ok(server.get("/templates"), 200), "templateID")).containsExactly("base");
        assertError(server.get("/templates/" + built[0]), 404, built[0]);
        assertError(server.get("/templates/aliases/busy"), 404, "busy");
        assertError(server.delete("/templates/busy"), 404, "busy");
        assertError(server.post("/sandboxes", "{\"templateID\":\"busy\"}"), 400, "not found");
        String[] again = build("{\"name\":\"busy\"}", "two");
        assertThat(again[0]).isNotEqualTo(built[0]);
        assertThat(envOf("busy")).isEqualTo("two");
    }

    @Test
    void a_paused_sandbox_of_a_template_also_blocks_its_delete() throws Exception {
        build("{\"name\":\"held\"}", "one");
        String sandbox = server.create("{\"templateID\":\"held\"}");
        ok(server.post("/sandboxes/" + sandbox + "/pause", ""), 204);

        assertError(server.delete("/templates/held"), 409, "paused");
    }
}
