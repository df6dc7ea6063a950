package io.agentenv.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentenv.backend.mock.FakeEnvd;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The COPY steps' file uploads over real HTTP on the mock backend, as the SDK's Template.build drives them: the link
 * (with the API key), the PUT to it (without), then a build whose COPY step finds the files.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class TemplateFileRoutesTest {
    private static final String HASH = "5e".repeat(32);

    @TempDir
    Path dataDir;

    private TestServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private TestServer start(Map<String, String> env) throws Exception {
        server = new TestServer(dataDir, env);
        return server;
    }

    private JsonNode ok(HttpResponse<String> response, int status) throws Exception {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        return response.body().isEmpty() ? null : server.parse(response);
    }

    /** A requested template's id. */
    private String template(String name) throws Exception {
        return ok(server.post("/v3/templates", "{\"name\":\"" + name + "\"}"), 202)
                .get("templateID")
                .asText();
    }

    private JsonNode link(String templateId, String hash) throws Exception {
        return ok(server.get("/templates/" + templateId + "/files/" + hash), 201);
    }

    /** A PUT as the SDK sends it: no API key, the body with its length. */
    private HttpResponse<String> put(String url, byte[] body) throws Exception {
        return server.send(HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(30))
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body))
                .build());
    }

    private static byte[] tar(String name, String content) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (TarArchiveOutputStream out = new TarArchiveOutputStream(bytes)) {
            byte[] data = content.getBytes(StandardCharsets.UTF_8);
            TarArchiveEntry entry = new TarArchiveEntry(name);
            entry.setSize(data.length);
            out.putArchiveEntry(entry);
            out.write(data);
            out.closeArchiveEntry();
        }
        return bytes.toByteArray();
    }

    private Path stored(String templateId, String hash) {
        return dataDir.resolve("template-files").resolve(templateId).resolve(hash);
    }

    @Test
    void behind_a_trusted_proxy_the_upload_link_has_the_scheme_and_host_clients_use() throws Exception {
        start(Map.of("AENV_TRUST_FORWARDED_HEADERS", "on"));
        String templateId = template("proxied");
        HttpRequest forwarded = server.request("/templates/" + templateId + "/files/" + HASH)
                .header("X-Forwarded-Proto", "https")
                .header("X-Forwarded-Host", "api.example.com")
                .GET()
                .build();

        JsonNode answer = ok(server.send(forwarded), 201);

        assertThat(answer.get("url").asText())
                .startsWith("https://api.example.com/templates/" + templateId + "/files/" + HASH + "?");
    }

    @Test
    void forwarded_headers_are_ignored_unless_trusted() throws Exception {
        start(Map.of());
        String templateId = template("direct");
        HttpRequest forwarded = server.request("/templates/" + templateId + "/files/" + HASH)
                .header("X-Forwarded-Proto", "https")
                .header("X-Forwarded-Host", "evil.example.com")
                .GET()
                .build();

        JsonNode answer = ok(server.send(forwarded), 201);

        assertThat(answer.get("url").asText()).startsWith(server.base + "/templates/" + templateId + "/files/");
    }

    @Test
    void an_upload_through_the_link_is_present_and_a_copy_step_uses_it() throws Exception {
        start(Map.of());
        String templateId = template("copied");
        JsonNode first = link(templateId, HASH);
        assertThat(first.get("present").asBoolean()).isFalse();
        String url = first.get("url").asText();
        assertThat(url).startsWith(server.base + "/templates/" + templateId + "/files/" + HASH + "?");
        byte[] archive = tar("hello.txt", "hello\n");

        ok(put(url, archive), 204);

        assertThat(stored(templateId, HASH)).hasBinaryContent(archive);
        JsonNode second = link(templateId, HASH);
        assertThat(second.get("present").asBoolean()).isTrue();
        assertThat(second.get("url").asText())
                .as("a fresh link for forceUpload")
                .isNotEqualTo(url);
        String buildId = server.templates
                .builds(new io.agentenv.spi.TemplateId(templateId))
                .getFirst()
                .id();
        ok(server.post("/v2/templates/" + templateId + "/builds/" + buildId, """
                        {"fromTemplate":"base","steps":[{"type":"COPY","args":["hello.txt","/srv/","",""],
                         "filesHash":"%s","forceUpload":false,"resolveSymlinks":false,"gzip":false}]}""".formatted(HASH)), 204);
        JsonNode status = finished(templateId, buildId);
        assertThat(status.get("status").asText()).as(status.toString()).isEqualTo("ready");
        assertThat(status.get("logEntries").toString()).contains("COPY hello.txt /srv/");
        FakeEnvd envd = server.backend.instances().getLast().fakeEnvd();
        assertThat(envd.uploads())
                .singleElement()
                .satisfies(upload -> assertThat(upload.content()).isEqualTo(archive));
        assertThat(envd.ran().getLast().args().getLast()).contains("dest='/srv/'");
    }

    @Test
    void a_link_is_used_once_and_only_for_its_own_template_and_hash() throws Exception {
        start(Map.of());
        String templateId = template("once");
        String url = link(templateId, HASH).get("url").asText();
        byte[] archive = tar("a.txt", "a");

        ok(put(url, archive), 204);

        assertThat(put(url, archive).statusCode()).as("used already").isEqualTo(403);
        String fresh = link(templateId, HASH).get("url").asText();
        String other = "7f".repeat(32);
        assertThat(put(fresh.replace(HASH, other), archive).statusCode()).isEqualTo(403);
        assertThat(put(fresh.replaceAll("signature=[0-9a-f]+", "signature=" + "0".repeat(64)), archive)
                        .statusCode())
                .isEqualTo(403);
        assertThat(put(fresh.replaceAll("expires=[0-9]+", "expires=99999999999"), archive)
                        .statusCode())
                .isEqualTo(403);
        assertThat(put(fresh.substring(0, fresh.indexOf('?')), archive).statusCode())
                .as("unsigned")
                .isEqualTo(403);
        assertThat(stored(templateId, other)).doesNotExist();
        ok(put(fresh, archive), 204);
    }

    @Test
    void the_link_needs_the_api_key_a_known_template_and_a_sha256_hash() throws Exception {
        start(Map.of());
        String templateId = template("checked");
        HttpResponse<String> anonymous =
                server.send(HttpRequest.newBuilder(server.base.resolve("/templates/" + templateId + "/files/" + HASH))
                        .GET()
                        .build());
        assertThat(anonymous.statusCode()).isEqualTo(401);
        assertThat(server.get("/templates/nosuchtemplate/files/" + HASH).statusCode())
                .isEqualTo(404);
        assertThat(server.get("/templates/" + templateId + "/files/" + HASH.toUpperCase(java.util.Locale.ROOT))
                        .statusCode())
                .isEqualTo(400);
    }

    @Test
    void a_body_that_is_not_a_safe_tar_archive_is_refused_and_not_kept() throws Exception {
        start(Map.of());
        String templateId = template("unsafe");

        HttpResponse<String> escaping =
                put(link(templateId, HASH).get("url").asText(), tar("../../etc/cron.d/x", "* * * * * root true"));
        HttpResponse<String> garbage = put(
                link(templateId, HASH).get("url").asText(),
                "not a tar ".repeat(200).getBytes(StandardCharsets.UTF_8));

        assertThat(escaping.statusCode()).isEqualTo(400);
        assertThat(escaping.body()).contains("leaves its directory");
        assertThat(garbage.statusCode()).isEqualTo(400);
        assertThat(stored(templateId, HASH)).doesNotExist();
        assertThat(link(templateId, HASH).get("present").asBoolean()).isFalse();
    }

    @Test
    void an_upload_over_the_limit_is_413_with_or_without_its_length() throws Exception {
        start(Map.of("AENV_MAX_TEMPLATE_FILE_BYTES", "4096"));
        String templateId = template("big");
        byte[] archive = tar("big.bin", "x".repeat(20_000));

        HttpResponse<String> declared = put(link(templateId, HASH).get("url").asText(), archive);
        HttpResponse<String> chunked = server.send(HttpRequest.newBuilder(
                        URI.create(link(templateId, HASH).get("url").asText()))
                .timeout(Duration.ofSeconds(30))
                .PUT(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(archive)))
                .build());

        assertThat(declared.statusCode()).as(declared.body()).isEqualTo(413);
        assertThat(chunked.statusCode()).as(chunked.body()).isEqualTo(413);
        assertThat(stored(templateId, HASH)).doesNotExist();
        try (var left = Files.list(dataDir.resolve("template-files").resolve(templateId))) {
            assertThat(left).as("no temporary file is left").isEmpty();
        }
        ok(put(link(templateId, HASH).get("url").asText(), tar("small.txt", "small")), 204);
    }

    @Test
    void an_expired_link_is_refused() throws Exception {
        start(Map.of());
        String templateId = template("late");
        AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-05-01T10:00:00Z"));
        Clock clock = new Clock() {
            @Override
            public ZoneOffset getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return now.get();
            }
        };
        Router router = new Router();
        new TemplateFileEndpoints(server.templates, server.templateFiles, 1 << 20, clock, new SecureRandom())
                .register(router);
        Exchange get = exchange(router, "GET", "/templates/" + templateId + "/files/" + HASH, Map.of(), new byte[0]);
        Reply.Json link = (Reply.Json) call(router, get);
        String url = ((io.agentenv.api.model.TemplateBuildFileUpload) link.body()).url();
        Map<String, List<String>> query = new HashMap<>();
        for (String pair : url.substring(url.indexOf('?') + 1).split("&")) {
            query.put(pair.substring(0, pair.indexOf('=')), List.of(pair.substring(pair.indexOf('=') + 1)));
        }
        now.set(now.get().plus(TemplateFileEndpoints.LINK_LIFETIME).plusSeconds(1));

        Exchange put = exchange(router, "PUT", "/templates/" + templateId + "/files/" + HASH, query, tar("a.txt", "a"));

        assertThatThrownBy(() -> call(router, put)).isInstanceOfSatisfying(HttpProblem.class, e -> {
            assertThat(e.status()).isEqualTo(403);
            assertThat(e.getMessage()).contains("expired");
        });
        assertThat(stored(templateId, HASH)).doesNotExist();
    }

    private static Exchange exchange(
            Router router, String method, String path, Map<String, List<String>> query, byte[] body) {
        Router.Match.Found found = (Router.Match.Found) router.match(method, path);
        return new Exchange(
                method,
                path,
                found.params(),
                query,
                new byte[0],
                "test",
                "http://127.0.0.1:1",
                body.length,
                new ByteArrayInputStream(body));
    }

    private static Reply call(Router router, Exchange exchange) throws Exception {
        Router.Match.Found found = (Router.Match.Found) router.match(exchange.method(), exchange.path());
        return found.route().endpoint().handle(exchange);
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
}
