package io.agentenv.server.api;

import static io.agentenv.server.extension.FakeExtensionServer.reply;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentenv.orchestrator.Hook;
import io.agentenv.server.extension.FakeExtensionServer;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Hook outcomes as API callers see them, over real HTTP on both sides (the API and the extension). */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class CustomExtensionRoutesTest {
    @TempDir
    Path dir;

    private FakeExtensionServer extension;
    private TestServer server;

    @BeforeEach
    void start() throws Exception {
        extension = FakeExtensionServer.start();
        server = new TestServer(
                dir,
                Map.of(
                        "AENV_CUSTOM_EXTENSION_URL",
                        extension.url().toString(),
                        "AENV_CUSTOM_EXTENSION_TIMEOUT_MS",
                        "500"));
    }

    @AfterEach
    void stop() throws Exception {
        try {
            server.close();
        } finally {
            extension.close();
        }
    }

    /** Asserts the error envelope and returns its message. */
    private String error(HttpResponse<String> response, int status) throws Exception {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        JsonNode body = server.parse(response);
        assertThat(body.get("code").asInt()).isEqualTo(status);
        return body.get("message").asText();
    }

    private String pausedSandbox() throws Exception {
        String id = server.create();
        assertThat(server.post("/sandboxes/" + id + "/pause", "{}").statusCode())
                .isEqualTo(204);
        return id;
    }

    @Test
    void create_passes_the_params_to_start_fresh_and_returns_201() throws Exception {
        String id = server.create("{\"templateID\":\"base\",\"customExtensionParams\":{\"vpn\":\"eu\"}}");

        FakeExtensionServer.Call call = extension.calls(Hook.START_FRESH).getFirst();
        assertThat(call.text("sandboxId")).isEqualTo(id);
        assertThat(call.body().get("customExtensionParams").toString()).isEqualTo("{\"vpn\":\"eu\"}");
        HttpResponse<String> params = server.get("/sandboxes/" + id + "/custom-extension-params");
        assertThat(params.statusCode()).isEqualTo(200);
        assertThat(params.body()).isEqualTo("{\"vpn\":\"eu\"}");
    }

    @Test
    void create_answers_400_when_start_fresh_rejects_and_502_when_it_fails() throws Exception {
        extension.script(
                Hook.START_FRESH,
                reply(403, "{\"reason\":\"no vpn seats\"}"),
                reply(500, "crashed"),
                new FakeExtensionServer.Hang(),
                new FakeExtensionServer.Drop());

        assertThat(error(server.post("/v2/sandboxes", "{\"templateID\":\"base\"}"), 400))
                .contains("start-fresh", "HTTP 403", "no vpn seats");
        assertThat(error(server.post("/sandboxes", "{\"templateID\":\"base\"}"), 502))
                .contains("start-fresh", "HTTP 500", "crashed");
        assertThat(error(server.post("/v2/sandboxes", "{\"templateID\":\"base\"}"), 502))
                .contains("start-fresh", "did not answer within 500 ms");
        assertThat(error(server.post("/v2/sandboxes", "{\"templateID\":\"base\"}"), 502))
                .contains("start-fresh", "could not be reached");

        assertThat(server.store.all()).isEmpty();
        assertThat(server.backend.openInstances()).isEmpty();
        assertThat(extension.calls(Hook.STOP)).hasSize(4);
    }

    @Test
    void connect_answers_400_and_the_deprecated_resume_409_when_start_resume_rejects() throws Exception {
        String id = pausedSandbox();
        extension.script(Hook.START_RESUME, reply(400, "profile revoked"), reply(422, "still revoked"));

        assertThat(error(server.post("/sandboxes/" + id + "/connect", "{\"timeout\":60}"), 400))
                .contains("start-resume", "HTTP 400", "profile revoked");
        assertThat(error(server.post("/sandboxes/" + id + "/resume", "{\"timeout\":60}"), 409))
                .contains("start-resume", "HTTP 422", "still revoked");

        assertThat(server.parse(server.get("/sandboxes/" + id)).get("state").asText())
                .isEqualTo("paused");
        assertThat(server.post("/sandboxes/" + id + "/connect", "{\"timeout\":60}")
                        .statusCode())
                .isEqualTo(201);
    }

    @Test
    void connect_and_resume_answer_502_when_start_resume_fails() throws Exception {
        String id = pausedSandbox();
        extension.script(Hook.START_RESUME, reply(503, "later"), new FakeExtensionServer.Drop());

        assertThat(error(server.post("/v2/sandboxes/" + id + "/connect", "{}"), 502))
                .contains("start-resume", "HTTP 503", "later");
        assertThat(error(server.post("/sandboxes/" + id + "/resume", "{}"), 502))
                .contains("start-resume", "could not be reached");
    }

    @Test
    void fork_answers_201_with_each_child_classified_next_to_the_successful_one() throws Exception {
        String id = server.create();
        extension.script(Hook.START_RESUME, reply(200, "{}"), reply(409, "too many children"), reply(500, "oom"));

        HttpResponse<String> response = server.post("/sandboxes/" + id + "/fork", "{\"count\":3}");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        List<Integer> codes = new ArrayList<>();
        List<String> messages = new ArrayList<>();
        int started = 0;
        for (JsonNode child : server.parse(response)) {
            if (child.hasNonNull("error")) {
                codes.add(child.get("error").get("code").asInt());
                messages.add(child.get("error").get("message").asText());
            } else {
                started++;
            }
        }
        assertThat(started).isEqualTo(1);
        assertThat(codes).containsExactlyInAnyOrder(400, 502);
        assertThat(messages)
                .anySatisfy(m -> assertThat(m).contains("start-resume", "HTTP 409", "too many children"))
                .anySatisfy(m -> assertThat(m).contains("start-resume", "HTTP 500", "oom"));
    }

    @Test
    void patch_returns_the_params_the_extension_computed_and_maps_its_failures() throws Exception {
        String id = server.create("{\"templateID\":\"base\",\"customExtensionParams\":{\"a\":1}}");
        String path = "/sandboxes/" + id + "/custom-extension-params";
        extension.script(
                Hook.PATCH_PARAMS,
                reply(200, "{\"customExtensionParams\":{\"a\":1,\"b\":2}}"),
                reply(400, "b must be odd"),
                reply(500, "nope"),
                new FakeExtensionServer.Hang());

        HttpResponse<String> ok = server.patch(path, "{\"b\":2}");
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        assertThat(ok.body()).isEqualTo("{\"a\":1,\"b\":2}");
        assertThat(error(server.patch(path, "{\"b\":3}"), 400)).contains("patch-params", "HTTP 400", "b must be odd");
        assertThat(error(server.patch(path, "{\"b\":3}"), 502)).contains("patch-params", "HTTP 500", "nope");
        assertThat(error(server.patch(path, "{\"b\":3}"), 502)).contains("patch-params", "did not answer");
        assertThat(server.get(path).body()).isEqualTo("{\"a\":1,\"b\":2}");
    }

    @Test
    void patch_answers_409_while_paused_without_calling_the_extension() throws Exception {
        String id = pausedSandbox();

        assertThat(error(server.patch("/sandboxes/" + id + "/custom-extension-params", "{\"a\":1}"), 409))
                .contains("paused");
        assertThat(extension.calls(Hook.PATCH_PARAMS)).isEmpty();
    }
}
