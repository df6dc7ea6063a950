package io.agentenv.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The volume routes over HTTP, on plain-directory storage: statuses, tokens and confinement as the server maps them. */
class VolumeRoutesTest {
    @TempDir
    Path dir;

    private TestServer server;

    @BeforeEach
    void start() throws Exception {
        server = new TestServer(
                dir,
                Map.of("AENV_VOLUME_STORAGE", "directory", "AENV_VOLUME_DEFAULT_MB", "8", "AENV_VOLUME_MAX_MB", "16"));
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    private JsonNode create(String name) throws Exception {
        HttpResponse<String> made = server.post("/volumes", "{\"name\":\"" + name + "\"}");
        assertThat(made.statusCode()).as(made.body()).isEqualTo(201);
        return server.parse(made);
    }

    private HttpResponse<String> content(JsonNode volume, String method, String route, String token, String body)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(
                        java.net.URI.create(server.request("/").build().uri() + "volumecontent/"
                                + volume.get("volumeID").asText() + "/" + route))
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return server.send(request.build());
    }

    @Test
    void createAnswersVolumeAndTokenAndTheDefaultSize() throws Exception {
        JsonNode volume = create("data");
        assertThat(volume.get("volumeID").asText()).matches("[a-z0-9]{20}");
        assertThat(volume.get("name").asText()).isEqualTo("data");
        assertThat(volume.get("token").asText()).matches("[0-9a-f]{64}");
        assertThat(volume.get("sizeMiB").asInt()).isEqualTo(8);
        assertThat(volume.has("domain")).isFalse();
        JsonNode again =
                server.parse(server.get("/volumes/" + volume.get("volumeID").asText()));
        assertThat(again.get("token")).isEqualTo(volume.get("token"));
    }

    @Test
    void badNameDuplicateTooLargeAndUnknownAreMapped() throws Exception {
        create("data");
        assertThat(server.post("/volumes", "{\"name\":\"data\"}").statusCode()).isEqualTo(409);
        assertThat(server.post("/volumes", "{\"name\":\"Bad\"}").statusCode()).isEqualTo(400);
        assertThat(server.post("/volumes", "{\"name\":\"big\",\"sizeMiB\":17}").statusCode())
                .isEqualTo(400);
        assertThat(server.post("/volumes", "{}").statusCode()).isEqualTo(400);
        assertThat(server.get("/volumes/aaaaaaaaaaaaaaaaaaaa").statusCode()).isEqualTo(404);
        assertThat(server.get("/volumes/..").statusCode()).isEqualTo(404);
        assertThat(server.delete("/volumes/aaaaaaaaaaaaaaaaaaaa").statusCode()).isEqualTo(404);
    }

    @Test
    void contentNeedsTheVolumesTokenNotTheApiKey() throws Exception {
        JsonNode volume = create("data");
        String token = volume.get("token").asText();
        assertThat(content(volume, "GET", "dir?path=/", null, null).statusCode())
                .isEqualTo(401);
        assertThat(content(volume, "GET", "dir?path=/", "0".repeat(64), null).statusCode())
                .isEqualTo(401);
        assertThat(content(volume, "GET", "dir?path=/", TestServer.KEY, null).statusCode())
                .isEqualTo(401);
        assertThat(content(volume, "GET", "dir?path=/", token, null).body()).isEqualTo("[]");
    }

    @Test
    void writeReadStatAndEscapes() throws Exception {
        JsonNode volume = create("data");
        String token = volume.get("token").asText();
        HttpResponse<String> written = content(volume, "PUT", "file?path=/a/b.txt", token, "hello");
        assertThat(written.statusCode()).as(written.body()).isEqualTo(200);
        assertThat(server.parse(written).get("type").asText()).isEqualTo("file");
        assertThat(content(volume, "GET", "file?path=/a/b.txt", token, null).body())
                .isEqualTo("hello");
        JsonNode stat = server.parse(content(volume, "GET", "path?path=a", token, null));
        assertThat(stat.get("type").asText()).isEqualTo("directory");
        assertThat(stat.get("path").asText()).isEqualTo("/a");

        assertThat(content(volume, "GET", "file?path=/../agentenv.db", token, null)
                        .statusCode())
                .isEqualTo(400);
        assertThat(content(volume, "GET", "file?path=/nope", token, null).statusCode())
                .isEqualTo(404);
        assertThat(content(volume, "GET", "file", token, null).statusCode()).isEqualTo(400);
        java.nio.file.Files.createSymbolicLink(
                dir.resolve("volumes").resolve(volume.get("volumeID").asText()).resolve("content/out"), dir);
        HttpResponse<String> escaped = content(volume, "GET", "file?path=/out/agentenv.db", token, null);
        assertThat(escaped.statusCode()).isEqualTo(400);
        assertThat(escaped.body()).contains("symbolic link");
    }

    @Test
    void deleteRemovesRecordAndContent() throws Exception {
        JsonNode volume = create("data");
        String id = volume.get("volumeID").asText();
        assertThat(server.delete("/volumes/" + id).statusCode()).isEqualTo(204);
        assertThat(server.get("/volumes/" + id).statusCode()).isEqualTo(404);
        assertThat(dir.resolve("volumes").resolve(id)).doesNotExist();
        assertThat(server.get("/volumes").body()).isEqualTo("[]");
    }

    @Test
    void aMountedVolumeIsReportedAndCannotBeDeletedUntilItsSandboxIsGone() throws Exception {
        JsonNode volume = create("shared");
        String id = volume.get("volumeID").asText();
        HttpResponse<String> made = server.post(
                "/v2/sandboxes",
                "{\"templateID\":\"base\",\"volumeMounts\":[{\"name\":\"shared\",\"path\":\"/data\"}," + "{\"name\":\""
                        + id + "\",\"path\":\"/ro\",\"readOnly\":true}]}");
        assertThat(made.statusCode()).as(made.body()).isEqualTo(201);
        String sandbox = server.parse(made).get("sandboxID").asText();

        assertThat(server.parse(server.get("/sandboxes/" + sandbox))
                        .get("volumeMounts")
                        .toString())
                .isEqualTo("[{\"name\":\"shared\",\"path\":\"/data\"},"
                        + "{\"name\":\"shared\",\"path\":\"/ro\",\"readOnly\":true}]");
        assertThat(server.parse(server.get("/v2/sandboxes"))
                        .get(0)
                        .get("volumeMounts")
                        .get(0)
                        .get("name")
                        .asText())
                .isEqualTo("shared");
        HttpResponse<String> refused = server.delete("/volumes/" + id);
        assertThat(refused.statusCode()).isEqualTo(409);
        assertThat(server.parse(refused).get("message").asText()).contains(sandbox);

        assertThat(server.delete("/sandboxes/" + sandbox).statusCode()).isEqualTo(204);
        assertThat(server.delete("/volumes/" + id).statusCode()).isEqualTo(204);
    }

    @Test
    void aCreateNamingAnUnknownVolumeOrABadPathIsRefused() throws Exception {
        create("data");
        HttpResponse<String> unknown = server.post(
                "/sandboxes", "{\"templateID\":\"base\",\"volumeMounts\":[{\"name\":\"nope\",\"path\":\"/d\"}]}");
        assertThat(unknown.statusCode()).isEqualTo(400);
        assertThat(server.parse(unknown).get("message").asText()).contains("volume nope not found");
        for (String path : new String[] {"data", "/", "/usr", "/proc/x", "/d/../e"}) {
            HttpResponse<String> bad = server.post(
                    "/sandboxes",
                    "{\"templateID\":\"base\",\"volumeMounts\":[{\"name\":\"data\",\"path\":\"" + path + "\"}]}");
            assertThat(bad.statusCode()).as(path).isEqualTo(400);
        }
        HttpResponse<String> twice = server.post(
                "/sandboxes",
                "{\"templateID\":\"base\",\"volumeMounts\":[{\"name\":\"data\",\"path\":\"/d\"},"
                        + "{\"name\":\"data\",\"path\":\"/d\"}]}");
        assertThat(twice.statusCode()).isEqualTo(400);
        assertThat(server.parse(twice).get("message").asText()).contains("two volume mounts at /d");
        assertThat(server.parse(server.get("/v2/sandboxes")).size()).isZero();
    }

    @Test
    void metricsShowEachVolumesUsageAndSize() throws Exception {
        String id = create("measured").get("volumeID").asText();
        String metrics = server.get("/metrics").body();
        assertThat(metrics)
                .containsPattern("aenv_volume_used_bytes\\{volume_id=\"" + id + "\",name=\"measured\"} [0-9]+\n")
                .containsPattern("aenv_volume_size_bytes\\{volume_id=\"" + id + "\",name=\"measured\"} [1-9][0-9]*\n");
    }

    @Test
    void aSandboxsNewestMetricCarriesItsVolumesUsage() throws Exception {
        create("measured");
        HttpResponse<String> made = server.post(
                "/v2/sandboxes",
                "{\"templateID\":\"base\",\"volumeMounts\":[{\"name\":\"measured\",\"path\":\"/m\"}]}");
        assertThat(made.statusCode()).as(made.body()).isEqualTo(201);
        String sandbox = server.parse(made).get("sandboxID").asText();

        JsonNode metrics = server.parse(server.get("/sandboxes/" + sandbox + "/metrics"));
        JsonNode newest = metrics.get(metrics.size() - 1);
        assertThat(newest.get("volumes").get(0).get("name").asText()).isEqualTo("measured");
        assertThat(newest.get("volumes").get(0).get("path").asText()).isEqualTo("/m");
        assertThat(newest.get("volumes").get(0).get("totalBytes").asLong()).isPositive();
        assertThat(newest.get("volumes").get(0).has("usedBytes")).isTrue();
        JsonNode many = server.parse(server.get("/sandboxes/metrics?sandbox_ids=" + sandbox));
        assertThat(many.toString()).contains("\"volumes\":[{\"name\":\"measured\",\"path\":\"/m\"");
    }
}
