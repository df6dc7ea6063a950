package io.agentenv.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** aenv template build, pull, templates and template rm against an in-process fake of the template build API. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class TemplateCommandsTest {
    private static final String TEMPLATE = "tpl0123456789abcdefg";
    private static final String BUILD = "7d8e3c1a-0b7e-4f0e-9c62-0d1f3b2a9e11";
    private static final String STATUS = "/templates/" + TEMPLATE + "/builds/" + BUILD + "/status";

    @TempDir
    Path dir;

    private CliFixture cli;
    private FakeSandboxServer server;
    private final ObjectMapper json = new ObjectMapper();

    @BeforeEach
    void start() throws IOException {
        cli = new CliFixture();
        server = cli.server();
    }

    @AfterEach
    void stop() {
        cli.close();
    }

    /** The build API's answers: the request, the start, and a status that is building, then ready or failed. */
    private void buildApi(String finalStatus) {
        server.api("POST /v3/templates", 202, """
                {"templateID":"%s","buildID":"%s","names":["web"],"aliases":["web"],"tags":["v1"],"public":false}""".formatted(TEMPLATE, BUILD));
        server.api("POST /v2/templates/" + TEMPLATE + "/builds/" + BUILD, 204, "");
        List<String> log = List.of(
                "{\"timestamp\":\"2026-01-01T00:00:00Z\",\"level\":\"info\",\"message\":\"RUN make\",\"step\":\"3\"}",
                "{\"timestamp\":\"2026-01-01T00:00:01Z\",\"level\":\"info\",\"message\":\"compiled\",\"step\":\"3\"}",
                "{\"timestamp\":\"2026-01-01T00:00:02Z\",\"level\":\"error\",\"message\":\"the end\"}");
        AtomicInteger polls = new AtomicInteger();
        server.api("GET " + STATUS, (request, exchange) -> {
            int offset = Integer.parseInt(request.uri().replaceAll(".*logsOffset=(\\d+).*", "$1"));
            int poll = polls.incrementAndGet();
            String status = poll < 3 ? "building" : finalStatus;
            // one new line per poll: the last one comes after the status says the build ended
            List<String> entries = log.subList(Math.min(offset, poll - 1), Math.min(poll, log.size()));
            String reason = status.equals("error")
                    ? ",\"reason\":{\"message\":\"step 3 (RUN make) exited with code 2\",\"step\":\"3\"}"
                    : "";
            FakeSandboxServer.json(
                    exchange,
                    200,
                    "{\"templateID\":\"%s\",\"buildID\":\"%s\",\"status\":\"%s\",\"logEntries\":[%s],\"logs\":[]%s}"
                            .formatted(TEMPLATE, BUILD, status, String.join(",", entries), reason));
        });
    }

    private List<FakeSandboxServer.Request> requests(String method, String pathPrefix) {
        return server.requests.stream()
                .filter(r -> r.method().equals(method) && r.uri().startsWith(pathPrefix))
                .toList();
    }

    private JsonNode body(FakeSandboxServer.Request request) throws IOException {
        return json.readTree(request.body());
    }

    /** The names of a gzipped tar's entries, with each regular file's content after a colon. */
    private static List<String> tarEntries(byte[] gzipped) throws IOException {
        byte[] tar = new GZIPInputStream(new ByteArrayInputStream(gzipped)).readAllBytes();
        List<String> entries = new ArrayList<>();
        int at = 0;
        while (at + 512 <= tar.length && tar[at] != 0) {
            String name = new String(tar, at, 100, StandardCharsets.UTF_8).replace("\0", "");
            long size = Long.parseLong(new String(tar, at + 124, 11, StandardCharsets.US_ASCII).trim(), 8);
            char type = (char) tar[at + 156];
            String content = type == '0' ? ":" + new String(tar, at + 512, (int) size, StandardCharsets.UTF_8) : "";
            entries.add(name + content);
            at += 512 + (int) ((size + 511) / 512) * 512;
        }
        return entries;
    }

    @Test
    void build_uploads_copy_files_starts_the_build_and_prints_its_log() throws Exception {
        buildApi("ready");
        Files.writeString(dir.resolve("Dockerfile"), """
                FROM e2bdev/base
                WORKDIR /app
                COPY src /app/src
                COPY VERSION /app/
                RUN make
                CMD ["./serve"]
                """);
        Files.createDirectories(dir.resolve("src/lib"));
        Files.writeString(dir.resolve("src/main.c"), "int main() {}\n");
        Files.writeString(dir.resolve("src/lib/util.c"), "void util() {}\n");
        Files.writeString(dir.resolve("VERSION"), "1.0\n");
        server.api("PUT /upload/src", (request, exchange) -> FakeSandboxServer.json(exchange, 200, "{}"));
        // the files route answers per hash: the server has VERSION, not src
        String mode = Files.getAttribute(dir.resolve("VERSION"), "unix:mode").toString();
        String versionHash = sha256("COPY VERSION /app/", "VERSION", mode, "4", "1.0\n");
        server.api("GET /templates/" + TEMPLATE + "/files/" + versionHash, 201, "{\"present\":true}");
        String[] srcHash = new String[1];
        server.api("GET /templates/" + TEMPLATE + "/files/" + srcHashOf(dir), (request, exchange) -> {
            srcHash[0] = request.uri();
            FakeSandboxServer.json(
                    exchange,
                    201,
                    "{\"present\":false,\"url\":\"" + server.url()
                            + "/upload/src\",\"headers\":{\"x-upload\":\"ok\"}}");
        });

        int code = cli.run("template", "build", dir.toString(), "--alias", "web:v1", "--cpu", "2", "--memory", "1024");

        assertThat(code).as(cli.stderr()).isZero();
        assertThat(srcHash[0]).as("the upload link of src was asked for").isNotNull();
        FakeSandboxServer.Request requested = requests("POST", "/v3/templates").getFirst();
        assertThat(body(requested).toString())
                .isEqualTo("{\"name\":\"web:v1\",\"tags\":[],\"cpuCount\":2,\"memoryMB\":1024}");
        FakeSandboxServer.Request upload = requests("PUT", "/upload/src").getFirst();
        assertThat(upload.header("X-API-Key"))
                .as("the upload URL gets no API key")
                .isNull();
        assertThat(upload.header("x-upload")).isEqualTo("ok");
        assertThat(tarEntries(upload.body()))
                .containsExactly("src/", "src/lib/", "src/lib/util.c:void util() {}\n", "src/main.c:int main() {}\n");
        assertThat(requests("PUT", "/upload")).hasSize(1);
        JsonNode start = body(requests("POST", "/v2/templates/" + TEMPLATE + "/builds/" + BUILD)
                .getFirst());
        assertThat(start.get("fromImage").asText()).isEqualTo("e2bdev/base");
        assertThat(start.get("startCmd").asText()).isEqualTo("./serve");
        assertThat(start.has("readyCmd")).isFalse();
        List<String> types = new ArrayList<>();
        start.get("steps").forEach(s -> types.add(s.get("type").asText()));
        assertThat(types).containsExactly("USER", "WORKDIR", "WORKDIR", "COPY", "COPY", "RUN", "USER");
        JsonNode copySrc = start.get("steps").get(3);
        assertThat(copySrc.get("args").toString()).isEqualTo("[\"src\",\"/app/src\",\"\",\"\"]");
        assertThat(copySrc.get("filesHash").asText()).isEqualTo(srcHashOf(dir));
        assertThat(start.get("steps").get(4).get("filesHash").asText()).isEqualTo(versionHash);
        assertThat(cli.stdout())
                .contains("building template " + TEMPLATE + " (web), build " + BUILD)
                .contains("uploaded src (4 files)")
                .contains("skipped uploading VERSION: the server has it")
                .contains("[3] RUN make\n[3] compiled\nerror: the end\n")
                .contains("template " + TEMPLATE + " (web) is ready");
    }

    @Test
    void a_failed_build_exits_1_with_its_reason_after_the_whole_log() throws Exception {
        buildApi("error");

        int code = cli.run(
                "template", "build", "--from-template", "base", "--run", "make", "--tag", "nightly", "--no-cache");

        assertThat(code).isEqualTo(1);
        assertThat(cli.stdout()).contains("[3] compiled", "error: the end");
        assertThat(cli.stderr())
                .contains("error: build " + BUILD + " of template " + TEMPLATE
                        + " failed: step 3 (RUN make) exited with code 2");
        JsonNode requested = body(requests("POST", "/v3/templates").getFirst());
        assertThat(requested.toString()).isEqualTo("{\"tags\":[\"nightly\"]}");
        JsonNode start = body(requests("POST", "/v2/templates/").getFirst());
        assertThat(start.toString())
                .isEqualTo("{\"fromTemplate\":\"base\",\"steps\":[{\"type\":\"RUN\",\"args\":[\"make\",\"root\"]}],"
                        + "\"force\":true}");
    }

    @Test
    void pull_builds_a_template_from_an_image_with_no_steps() throws Exception {
        buildApi("ready");

        int code = cli.run("-o", "json", "pull", "docker.io/library/python:3.12", "--alias", "py");

        assertThat(code).as(cli.stderr()).isZero();
        assertThat(body(requests("POST", "/v3/templates").getFirst()).toString())
                .isEqualTo("{\"name\":\"py\",\"tags\":[]}");
        assertThat(body(requests("POST", "/v2/templates/").getFirst()).toString())
                .isEqualTo("{\"fromImage\":\"docker.io/library/python:3.12\",\"steps\":[]}");
        JsonNode printed = json.readTree(cli.stdout());
        assertThat(printed.get("templateID").asText()).isEqualTo(TEMPLATE);
        assertThat(printed.get("status").asText()).isEqualTo("ready");
        assertThat(cli.stderr()).contains("[3] RUN make");
    }

    @Test
    void a_bad_dockerfile_or_missing_copy_source_is_refused_before_any_build() throws Exception {
        Files.writeString(dir.resolve("Dockerfile"), "FROM e2bdev/base\nEXPOSE 80\n");
        assertThat(cli.run("template", "build", dir.toString())).isEqualTo(2);
        assertThat(cli.stderr()).contains("Dockerfile line 2: EXPOSE is not supported");
        assertThat(cli.run("template", "build", dir.resolve("nope").toString())).isEqualTo(2);
        assertThat(cli.stderr()).contains("is not a directory");
        assertThat(server.requests).isEmpty();

        buildApi("ready");
        Files.writeString(dir.resolve("Dockerfile"), "FROM e2bdev/base\nCOPY missing /m\n");
        assertThat(cli.run("template", "build", dir.toString())).isEqualTo(2);
        assertThat(cli.stderr()).contains("COPY missing: no files found");
        assertThat(requests("POST", "/v2/templates/")).isEmpty();
    }

    @Test
    void templates_shows_names_status_and_tags_and_rm_reports_a_409() {
        server.api("GET /templates", 200, """
                [{"templateID":"%s","buildID":"%s","names":["web"],"aliases":["web"],"buildStatus":"ready",
                  "createdAt":"2026-01-02T00:00:00Z"},
                 {"templateID":"base","buildID":"base","names":["base"],"aliases":["base"],"buildStatus":"ready",
                  "createdAt":null}]""".formatted(TEMPLATE, BUILD));
        server.api("GET /templates/" + TEMPLATE + "/tags", 200, """
                [{"tag":"default","buildID":"%s","createdAt":"2026-01-02T00:00:00Z"},
                 {"tag":"v1","buildID":"%s","createdAt":"2026-01-02T00:00:00Z"}]""".formatted(BUILD, BUILD));
        server.api("DELETE /templates/web", 409, """
                {"code":409,"message":"template %s cannot be deleted: 1 sandbox was created from it"}""".formatted(TEMPLATE));
        server.api("DELETE /templates/old", 204, "");

        assertThat(cli.run("templates")).as(cli.stderr()).isZero();
        assertThat(cli.run("template", "rm", "web")).isEqualTo(1);
        assertThat(cli.run("template", "rm", "old")).isZero();
        assertThat(cli.run("template", "ls")).isZero();

        assertThat(cli.stdout())
                .containsPattern("TEMPLATE ID\\s+NAMES\\s+STATUS\\s+TAGS\\s+CREATED")
                .containsPattern(TEMPLATE + "\\s+web\\s+ready\\s+default,v1\\s+2026-01-02T00:00:00Z")
                .containsPattern("base\\s+base\\s+ready\\s+-\\s+-")
                .contains("deleted template old");
        assertThat(cli.stderr()).contains("error: template " + TEMPLATE + " cannot be deleted");
        assertThat(requests("GET", "/templates/base/tags")).isEmpty();
    }

    private static String srcHashOf(Path context) throws IOException {
        return TemplateFiles.hash("src", "/app/src", TemplateFiles.files(context, "src"));
    }

    /** SHA-256 over the strings, as the SDK feeds its hash. */
    private static String sha256(String... parts) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        for (String part : parts) {
            sha.update(part.getBytes(StandardCharsets.UTF_8));
        }
        return HexFormat.of().formatHex(sha.digest());
    }
}
