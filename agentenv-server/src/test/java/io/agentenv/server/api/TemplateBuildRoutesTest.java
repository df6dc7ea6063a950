package io.agentenv.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentenv.spi.GuestCommand;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** E2B's template build routes over real HTTP on the mock backend, in the order the SDK's Template.build calls them. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class TemplateBuildRoutesTest {
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

    private JsonNode finished(String templateId, String buildId) throws Exception {
        Instant deadline = Instant.now().plusSeconds(30);
        while (true) {
            JsonNode status =
                    ok(server.get("/templates/" + templateId + "/builds/" + buildId + "/status?logsOffset=0"), 200);
            String state = status.get("status").asText();
            if (state.equals("ready") || state.equals("error")) {
                return status;
            }
            assertThat(Instant.now()).as("the build finished").isBefore(deadline);
            Thread.sleep(20);
        }
    }

    @Test
    void a_requested_build_runs_its_steps_and_the_template_creates_sandboxes() throws Exception {
        JsonNode requested = ok(server.post("/v3/templates", "{\"name\":\"web:v1\",\"cpuCount\":2}"), 202);
        assertThat(requested.get("names").get(0).asText()).isEqualTo("web");
        assertThat(requested.get("tags").get(0).asText()).isEqualTo("v1");
        String templateId = requested.get("templateID").asText();
        String buildId = requested.get("buildID").asText();

        ok(server.post("/v2/templates/" + templateId + "/builds/" + buildId, """
                        {"fromImage":"e2bdev/base","steps":[{"type":"ENV","args":["MODE","prod"]},
                         {"type":"RUN","args":["echo built","root"]}]}"""), 204);
        JsonNode status = finished(templateId, buildId);

        assertThat(status.get("status").asText()).as(status.toString()).isEqualTo("ready");
        assertThat(status.get("templateID").asText()).isEqualTo(templateId);
        assertThat(status.get("logEntries").toString()).contains("RUN echo built", "is ready");
        assertThat(status.get("logEntries").get(0).get("level").asText()).isEqualTo("info");
        JsonNode sandbox = ok(server.post("/sandboxes", "{\"templateID\":\"web\"}"), 201);
        assertThat(sandbox.get("sandboxID").asText()).isNotEmpty();
        ok(server.post("/sandboxes", "{\"templateID\":\"" + templateId + "\"}"), 201);
        JsonNode alias = ok(server.get("/templates/aliases/web"), 200);
        assertThat(alias.get("templateID").asText()).isNotEmpty();
        JsonNode later =
                ok(server.get("/templates/" + templateId + "/builds/" + buildId + "/status?logsOffset=1000"), 200);
        assertThat(later.get("logEntries")).isEmpty();
    }

    @Test
    void a_failing_step_is_an_error_with_the_step_its_code_and_its_output() throws Exception {
        server.backend.onPrepare(instance -> instance.fakeEnvd().commands((command, output) -> {
            output.stderr("boom\n".getBytes(StandardCharsets.UTF_8));
            return new GuestCommand.Exit(3, true, "exit status 3");
        }));
        JsonNode requested = ok(server.post("/v3/templates", "{\"name\":\"broken\"}"), 202);
        String templateId = requested.get("templateID").asText();
        String buildId = requested.get("buildID").asText();
        ok(
                server.post(
                        "/v2/templates/" + templateId + "/builds/" + buildId,
                        "{\"fromTemplate\":\"base\",\"steps\":[{\"type\":\"RUN\",\"args\":[\"false\"]}]}"),
                204);

        JsonNode status = finished(templateId, buildId);

        assertThat(status.get("status").asText()).isEqualTo("error");
        assertThat(status.get("reason").get("message").asText()).contains("step 1 (RUN false) exited with code 3");
        assertThat(status.get("reason").get("step").asText()).isEqualTo("1");
        assertThat(status.get("logEntries").toString()).contains("boom");
        assertThat(server.post("/sandboxes", "{\"templateID\":\"broken\"}").statusCode())
                .isEqualTo(400);
    }

    @Test
    void bad_requests_get_clear_answers() throws Exception {
        assertThat(server.post("/v3/templates", "{\"name\":\"Not Valid\"}").statusCode())
                .isEqualTo(400);
        assertThat(server.post("/v3/templates", "{\"name\":\"base\"}").statusCode())
                .isEqualTo(409);
        assertThat(server.post("/v3/templates", "{\"cpuCount\":0}").statusCode())
                .isEqualTo(400);
        // the mock's sandboxes have 1024 MiB of disk, all of it free in a template's sandboxes
        HttpResponse<String> tooMuchDisk = server.post("/v3/templates", "{\"name\":\"big\",\"minFreeDiskMb\":1025}");
        assertThat(tooMuchDisk.statusCode()).isEqualTo(400);
        assertThat(tooMuchDisk.body()).contains("minFreeDiskMb 1025").contains("1024 MiB");
        assertThat(server.post("/v3/templates", "{\"name\":\"neg\",\"minFreeDiskMb\":-1}")
                        .statusCode())
                .isEqualTo(400);
        ok(server.post("/v3/templates", "{\"name\":\"fits\",\"minFreeDiskMb\":1024}"), 202);
        JsonNode requested = ok(server.post("/v3/templates", "{\"name\":\"twice\"}"), 202);
        String builds = "/v2/templates/" + requested.get("templateID").asText() + "/builds/";
        String buildId = requested.get("buildID").asText();
        assertThat(server.post(builds + buildId, "{\"steps\":[]}").statusCode()).isEqualTo(400);
        assertThat(server.post(builds + "nope", "{\"fromTemplate\":\"base\"}").statusCode())
                .isEqualTo(404);
        ok(server.post(builds + buildId, "{\"fromTemplate\":\"base\"}"), 204);
        assertThat(server.post(builds + buildId, "{\"fromTemplate\":\"base\"}").statusCode())
                .isEqualTo(409);
        assertThat(server.get("/templates/x/builds/y/status?logsOffset=-1").statusCode())
                .isEqualTo(400);
        HttpResponse<String> upload =
                server.get("/templates/" + requested.get("templateID").asText() + "/files/abc");
        assertThat(upload.statusCode()).isEqualTo(400);
        assertThat(upload.body()).contains("files hash");
    }
}
