package io.agentenv.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The web console's files under /console on the real server (the agentenv-console jar is on the class path, as in
 * production): the page and its hashed assets, the security headers, caching, gzip, and AENV_CONSOLE=off.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ConsoleRoutesTest {
    @TempDir
    Path dir;

    private static HttpResponse<byte[]> get(TestServer server, String path, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(server.base.resolve(path));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return server.http.send(request.GET().build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static void assertSecurityHeaders(HttpResponse<?> response) {
        String csp = response.headers().firstValue("Content-Security-Policy").orElseThrow();
        assertThat(csp)
                .contains("default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'")
                .contains("frame-ancestors 'none'")
                .doesNotContain("unsafe-inline", "unsafe-eval", "data:");
        assertThat(response.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
        assertThat(response.headers().firstValue("Referrer-Policy")).hasValue("no-referrer");
        assertThat(response.headers().firstValue("X-Frame-Options")).hasValue("DENY");
    }

    @Test
    void the_page_is_served_without_a_key_with_a_strict_policy_and_revalidated_every_time() throws Exception {
        try (TestServer server = new TestServer(dir)) {
            HttpResponse<byte[]> page = get(server, "/console/");
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
            assertThat(page.headers().firstValue("Cache-Control")).hasValue("no-cache");
            assertSecurityHeaders(page);
            String html = new String(page.body(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(html)
                    .contains("<div id=\"app\">")
                    .doesNotContain("<style")
                    .doesNotContain(" style=");
            // every script is a file of this origin: no inline script
            assertThat(html.split("<script")).allSatisfy(part -> {
                if (part.contains("</script>")) {
                    assertThat(part).contains("src=\"/console/assets/");
                }
            });
        }
    }

    @Test
    void hashed_assets_are_cached_for_a_year_and_sent_gzipped_to_clients_that_accept_it() throws Exception {
        try (TestServer server = new TestServer(dir)) {
            String html = new String(get(server, "/console/").body(), java.nio.charset.StandardCharsets.UTF_8);
            java.util.regex.Matcher script = java.util.regex.Pattern.compile("src=\"(/console/assets/[^\"]+\\.js)\"")
                    .matcher(html);
            assertThat(script.find()).isTrue();
            String path = script.group(1);

            HttpResponse<byte[]> plain = get(server, path);
            assertThat(plain.statusCode()).isEqualTo(200);
            assertThat(plain.headers().firstValue("Content-Type")).hasValue("application/javascript; charset=utf-8");
            assertThat(plain.headers().firstValue("Cache-Control")).hasValue("public, max-age=31536000, immutable");
            assertThat(plain.headers().firstValue("Content-Encoding")).isEmpty();
            assertSecurityHeaders(plain);

            HttpResponse<byte[]> gzipped = get(server, path, "Accept-Encoding", "gzip, deflate");
            assertThat(gzipped.headers().firstValue("Content-Encoding")).hasValue("gzip");
            assertThat(gzipped.headers().firstValue("Vary")).hasValue("Accept-Encoding");
            assertThat(gzipped.body().length).isLessThan(plain.body().length);
            try (GZIPInputStream in = new GZIPInputStream(new java.io.ByteArrayInputStream(gzipped.body()))) {
                assertThat(in.readAllBytes()).isEqualTo(plain.body());
            }
        }
    }

    @Test
    void the_bare_prefix_redirects_unknown_files_are_404_and_writes_are_405() throws Exception {
        try (TestServer server = new TestServer(dir)) {
            HttpResponse<byte[]> bare = get(server, "/console");
            assertThat(bare.statusCode()).isEqualTo(308);
            assertThat(bare.headers().firstValue("Location")).hasValue("/console/");

            HttpResponse<byte[]> missing = get(server, "/console/assets/nope.js");
            assertThat(missing.statusCode()).isEqualTo(404);
            assertSecurityHeaders(missing);
            assertThat(get(server, "/console/assets.txt").statusCode()).isEqualTo(404);
            assertThat(get(server, "/console/../pom.xml").statusCode()).isNotEqualTo(200);

            HttpResponse<String> post = server.http.send(
                    HttpRequest.newBuilder(server.base.resolve("/console/"))
                            .POST(HttpRequest.BodyPublishers.ofString("x"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(post.statusCode()).isEqualTo(405);
            assertThat(post.headers().firstValue("Allow")).hasValue("GET, HEAD");
        }
    }

    @Test
    void the_api_is_unchanged_beside_the_console() throws Exception {
        try (TestServer server = new TestServer(dir)) {
            assertThat(server.get("/v2/sandboxes").statusCode()).isEqualTo(200);
            HttpResponse<String> noKey = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(server.base.resolve("/v2/sandboxes"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(noKey.statusCode()).isEqualTo(401);
            assertThat(noKey.headers().firstValue("Content-Security-Policy")).isEmpty();
        }
    }

    @Test
    void aenv_console_off_leaves_console_paths_to_the_api_which_knows_none() throws Exception {
        try (TestServer server = new TestServer(dir, Map.of("AENV_CONSOLE", "off"))) {
            HttpResponse<byte[]> page = get(server, "/console/");
            assertThat(page.statusCode()).isEqualTo(401);
            assertThat(page.headers().firstValue("Content-Security-Policy")).isEmpty();
            assertThat(server.get("/console/").statusCode()).isEqualTo(404);
        }
    }
}
