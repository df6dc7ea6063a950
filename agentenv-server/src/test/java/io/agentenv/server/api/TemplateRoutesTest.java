package io.agentenv.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentenv.backend.mock.MockBackendFactory;
import io.agentenv.spi.Resources;
import io.agentenv.spi.TemplateDescriptor;
import io.agentenv.spi.TemplateId;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** E2B's template read routes over real HTTP (the build routes: {@link TemplateBuildRoutesTest}). */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class TemplateRoutesTest {
    private static final Instant BUILT = Instant.parse("2026-03-01T10:15:30.123456789Z");
    private static final Resources PYTHON_RESOURCES = new Resources(4, 2048, 8192);

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

    private void addTemplate(String name, Resources resources, Optional<Instant> builtAt) {
        server.backend.addTemplate(new TemplateDescriptor(new TemplateId(name), resources, builtAt));
    }

    private String snapshot(String sandboxId, String body) throws Exception {
        HttpResponse<String> created = server.post("/sandboxes/" + sandboxId + "/snapshots", body);
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        return server.parse(created).get("snapshotID").asText();
    }

    private static List<String> ids(JsonNode templates) {
        List<String> ids = new ArrayList<>();
        templates.forEach(t -> ids.add(t.get("templateID").asText()));
        return ids;
    }

    private void assertError(HttpResponse<String> response, int status, String messagePart) throws Exception {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        JsonNode body = server.parse(response);
        assertThat(body.get("code").asInt()).isEqualTo(status);
        assertThat(body.get("message").asText()).contains(messagePart);
    }

    @Test
    void the_v1_list_holds_the_backends_templates_with_e2bs_fields_and_not_the_snapshots() throws Exception {
        addTemplate("python", PYTHON_RESOURCES, Optional.of(BUILT));
        String sandbox = server.create();
        snapshot(sandbox, "{\"name\":\"my-snap\"}");

        HttpResponse<String> response = server.get("/templates?teamID=ignored");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode templates = server.parse(response);
        assertThat(ids(templates)).containsExactly("python", "base");
        JsonNode python = templates.get(0);
        assertThat(python.get("buildID").asText()).isEqualTo("python");
        assertThat(python.get("cpuCount").asInt()).isEqualTo(4);
        assertThat(python.get("memoryMB").asInt()).isEqualTo(2048);
        assertThat(python.get("diskSizeMB").asInt()).isEqualTo(8192);
        assertThat(python.get("public").asBoolean()).isTrue();
        assertThat(python.get("aliases").toString()).isEqualTo("[\"python\"]");
        assertThat(python.get("names").toString()).isEqualTo("[\"python\"]");
        assertThat(Instant.parse(python.get("createdAt").asText())).isEqualTo(BUILT);
        assertThat(Instant.parse(python.get("updatedAt").asText())).isEqualTo(BUILT);
        assertThat(python.get("buildCount").asInt()).isEqualTo(1);
        assertThat(python.get("envdVersion").asText()).isEqualTo(WireMapping.ENVD_VERSION);
        assertThat(python.get("buildStatus").asText()).isEqualTo("ready");
        assertThat(python.has("lastSpawnedAt")).isTrue();
        assertThat(python.get("lastSpawnedAt").isNull()).isTrue();
        assertThat(python.get("createdBy").isNull()).isTrue();
        assertThat(python.has("spawnCount"))
                .as("usage is not recorded, so no count is invented")
                .isFalse();
        JsonNode base = templates.get(1);
        assertThat(base.get("cpuCount").asInt()).isEqualTo(MockBackendFactory.BASE_RESOURCES.cpuCount());
        assertThat(base.get("createdAt").isNull())
                .as("the mock backend does not know when base was built")
                .isTrue();
    }

    @Test
    void the_v2_list_pages_newest_first_with_a_token_only_while_more_remain() throws Exception {
        addTemplate("older", PYTHON_RESOURCES, Optional.of(BUILT.minusSeconds(60)));
        addTemplate("tie-a", PYTHON_RESOURCES, Optional.of(BUILT));
        addTemplate("tie-b", PYTHON_RESOURCES, Optional.of(BUILT));

        List<String> seen = new ArrayList<>();
        String query = "/v2/templates?limit=1";
        int pages = 0;
        while (true) {
            HttpResponse<String> page = server.get(query);
            assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
            seen.addAll(ids(server.parse(page)));
            pages++;
            Optional<String> token = page.headers().firstValue(ListEndpoints.NEXT_TOKEN_HEADER);
            if (token.isEmpty()) {
                break;
            }
            query = "/v2/templates?limit=1&nextToken=" + token.get();
        }

        assertThat(seen).containsExactly("tie-b", "tie-a", "older", "base");
        assertThat(pages).isEqualTo(4);
        HttpResponse<String> all = server.get("/v2/templates");
        assertThat(ids(server.parse(all))).containsExactly("tie-b", "tie-a", "older", "base");
        assertThat(all.headers().firstValue(ListEndpoints.NEXT_TOKEN_HEADER)).isEmpty();
    }

    @Test
    void the_v2_list_rejects_a_bad_token_or_limit_with_400() throws Exception {
        assertError(server.get("/v2/templates?nextToken=garbage"), 400, "nextToken");
        assertError(server.get("/v2/templates?limit=0"), 400, "limit");
        assertError(server.get("/v2/templates?limit=101"), 400, "limit");
    }

    @Test
    void a_built_in_template_has_exactly_one_build_whose_id_is_the_template_id() throws Exception {
        addTemplate("python", PYTHON_RESOURCES, Optional.of(BUILT));

        HttpResponse<String> response = server.get("/templates/python");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode template = server.parse(response);
        assertThat(template.get("templateID").asText()).isEqualTo("python");
        assertThat(template.get("public").asBoolean()).isTrue();
        assertThat(template.get("names").toString()).isEqualTo("[\"python\"]");
        assertThat(template.get("lastSpawnedAt").isNull()).isTrue();
        assertThat(template.get("builds")).hasSize(1);
        JsonNode build = template.get("builds").get(0);
        assertThat(build.get("buildID").asText()).isEqualTo("python");
        assertThat(build.get("status").asText()).isEqualTo("ready");
        assertThat(Instant.parse(build.get("createdAt").asText())).isEqualTo(BUILT);
        assertThat(build.get("cpuCount").asInt()).isEqualTo(4);
        assertThat(build.get("memoryMB").asInt()).isEqualTo(2048);
        assertThat(build.get("diskSizeMB").asInt()).isEqualTo(8192);
        assertThat(build.get("envdVersion").asText()).isEqualTo(WireMapping.ENVD_VERSION);
    }

    @Test
    void a_snapshot_is_found_by_id_or_name_like_a_create_and_delete_resolve_it() throws Exception {
        String sandbox = server.create();
        String named = snapshot(sandbox, "{\"name\":\"my-snap\"}");
        String unnamed = snapshot(sandbox, "{}");

        JsonNode byName = server.parse(server.get("/templates/my-snap"));
        assertThat(byName.get("templateID").asText()).isEqualTo(named);
        assertThat(byName.get("aliases").toString()).isEqualTo("[\"my-snap\"]");
        assertThat(byName.get("builds").get(0).get("buildID").asText()).isEqualTo(named);
        assertThat(byName.get("builds").get(0).get("diskSizeMB").asInt())
                .isEqualTo(MockBackendFactory.BASE_RESOURCES.diskSizeMiB());
        JsonNode byId = server.parse(server.get("/templates/" + unnamed));
        assertThat(byId.get("aliases")).isEmpty();
        assertThat(byId.get("names").toString()).isEqualTo("[\"" + unnamed + "\"]");
        assertThat(byId.get("createdAt").isTextual()).isTrue();

        assertThat(server.delete("/templates/my-snap").statusCode()).isEqualTo(204);
        assertError(server.get("/templates/my-snap"), 404, "template my-snap not found");
        assertError(server.get("/templates/" + named), 404, "not found");
    }

    @Test
    void an_unknown_template_is_a_404_with_the_error_body() throws Exception {
        assertError(server.get("/templates/no-such-template"), 404, "template no-such-template not found");
    }

    @Test
    void a_later_build_page_of_a_template_is_empty_and_a_bad_token_is_400() throws Exception {
        String token = server.get("/v2/templates?limit=1")
                .headers()
                .firstValue(ListEndpoints.NEXT_TOKEN_HEADER)
                .orElse(PageToken.encode(new io.agentenv.orchestrator.Cursor(BUILT, "base")));

        HttpResponse<String> later = server.get("/templates/base?nextToken=" + token);

        assertThat(later.statusCode()).as(later.body()).isEqualTo(200);
        assertThat(server.parse(later).get("builds")).isEmpty();
        assertError(server.get("/templates/base?nextToken=garbage"), 400, "nextToken");
    }

    @Test
    void an_alias_resolves_to_its_template_id_and_public_is_true() throws Exception {
        String sandbox = server.create();
        String snapshotId = snapshot(sandbox, "{\"name\":\"my-snap\"}");

        HttpResponse<String> base = server.get("/templates/aliases/base");
        assertThat(base.statusCode()).as(base.body()).isEqualTo(200);
        assertThat(base.body()).isEqualTo("{\"templateID\":\"base\",\"public\":true}");
        assertThat(server.parse(server.get("/templates/aliases/my-snap"))
                        .get("templateID")
                        .asText())
                .isEqualTo(snapshotId);
    }

    @Test
    void an_alias_route_answers_400_for_a_malformed_alias_and_404_for_an_unknown_one() throws Exception {
        String sandbox = server.create();
        String snapshotId = snapshot(sandbox, "{}");

        assertError(server.get("/templates/aliases/bad%20alias"), 400, "alias");
        assertError(server.get("/templates/aliases/" + "x".repeat(129)), 400, "alias");
        assertError(server.get("/templates/aliases/nobody"), 404, "template alias nobody not found");
        assertError(server.get("/templates/aliases/" + snapshotId), 404, "not found"); // an id is not an alias
    }

    @Test
    void the_template_routes_need_the_api_key() throws Exception {
        for (String path : List.of(
                "/templates",
                "/v2/templates",
                "/templates/base",
                "/templates/aliases/base",
                "/templates/abc/builds/abc/status")) {
            HttpResponse<String> response = server.send(
                    HttpRequest.newBuilder(server.base.resolve(path)).GET().build());
            assertThat(response.statusCode()).as(path).isEqualTo(401);
        }
    }
}
