package io.agentenv.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** The CLI against a small in-test HTTP server that records requests and plays back scripted answers. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class AenvTest {
    private static final String KEY = "e2b_0123456789abcdef0123456789abcdef01234567";
    private static final String ID = "abcdefghij0123456789";
    private static final String SANDBOX = """
            {"templateID":"base","sandboxID":"%s","clientID":"","envdVersion":"0.6.13","envdAccessToken":"t",
             "trafficAccessToken":null,"domain":null}""".formatted(ID);
    private static final String LISTED = """
            {"templateID":"base","sandboxID":"%s","clientID":"","startedAt":"2026-01-01T00:00:00Z",
             "endAt":"2026-01-01T00:05:00Z","cpuCount":2,"memoryMB":512,"diskSizeMB":1024,"metadata":{"a":"b"},
             "state":"%s","envdVersion":"0.6.13"}""";

    record Recorded(String method, String rawPath, String rawQuery, String body, List<String> apiKeys) {}

    record Answer(int status, String body, Map<String, String> headers) {}

    private HttpServer http;
    private final ConcurrentLinkedDeque<Recorded> requests = new ConcurrentLinkedDeque<>();
    private final Map<String, ConcurrentLinkedDeque<Answer>> answers = new ConcurrentHashMap<>();
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeEach
    void start() throws IOException {
        http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        http.createContext("/", this::handle);
        http.start();
    }

    @AfterEach
    void stop() {
        http.stop(0);
    }

    private void handle(HttpExchange ex) throws IOException {
        String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        requests.add(new Recorded(
                ex.getRequestMethod(),
                ex.getRequestURI().getRawPath(),
                ex.getRequestURI().getRawQuery(),
                body,
                ex.getRequestHeaders().getOrDefault("X-API-Key", List.of())));
        Answer answer = answers.getOrDefault(
                        ex.getRequestMethod() + " " + ex.getRequestURI().getRawPath(), new ConcurrentLinkedDeque<>())
                .poll();
        if (answer == null) {
            answer = new Answer(404, "{\"code\":404,\"message\":\"route not found\"}", Map.of());
        }
        answer.headers().forEach((k, v) -> ex.getResponseHeaders().add(k, v));
        byte[] bytes = answer.body().getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", "application/json");
        ex.sendResponseHeaders(answer.status(), answer.status() == 204 ? -1 : bytes.length);
        if (answer.status() != 204) {
            ex.getResponseBody().write(bytes);
        }
        ex.close();
    }

    private void answer(String route, int status, String body, Map<String, String> headers) {
        answers.computeIfAbsent(route, k -> new ConcurrentLinkedDeque<>()).add(new Answer(status, body, headers));
    }

    private void answer(String route, int status, String body) {
        answer(route, status, body, Map.of());
    }

    private int aenv(String... args) {
        Map<String, String> env =
                Map.of("AENV_API_URL", "http://127.0.0.1:" + http.getAddress().getPort(), "AENV_API_KEY", KEY);
        return Aenv.run(args, env, stdio(), hook -> {});
    }

    private Stdio stdio() {
        return new Stdio(InputStream.nullInputStream(), out, err, false);
    }

    private Recorded only() {
        assertThat(requests).hasSize(1);
        return requests.getFirst();
    }

    private static java.util.Set<String> builtCommands(String... args) {
        Aenv aenv = new Aenv(
                Map.of(),
                new Stdio(
                        InputStream.nullInputStream(),
                        OutputStream.nullOutputStream(),
                        OutputStream.nullOutputStream(),
                        false),
                hook -> {});
        return Aenv.commandLine(aenv, args).getSubcommands().keySet();
    }

    @Test
    void a_line_naming_a_command_builds_that_command_alone() {
        assertThat(builtCommands("list")).containsExactlyInAnyOrder("list", "ls");
        assertThat(builtCommands("--api-url", "http://h:1", "-o", "json", "ls", "--state", "paused"))
                .containsExactlyInAnyOrder("list", "ls");
        assertThat(builtCommands("files", "ls", ID)).containsExactly("files");
        assertThat(builtCommands("volume", "put", "data", "-", "/a")).containsExactly("volume");
    }

    @Test
    void help_completion_no_command_or_an_unknown_one_build_every_command() {
        int all = Aenv.COMMANDS.size();
        for (String[] args : List.of(
                new String[] {},
                new String[] {"--help"},
                new String[] {"help", "list"},
                new String[] {"completion"},
                new String[] {"lst"},
                new String[] {"--api-url"})) {
            assertThat(builtCommands(args)).as(String.join(" ", args)).hasSizeGreaterThan(all);
        }
    }

    @Test
    void root_options_reach_a_command_built_alone_and_help_lists_them_all() {
        answer("GET /v2/sandboxes", 200, "[]");
        String url = "http://127.0.0.1:" + http.getAddress().getPort();
        assertThat(Aenv.run(new String[] {"list", "--api-url", url, "--api-key", KEY}, Map.of(), stdio(), h -> {}))
                .isZero();
        assertThat(only().apiKeys()).containsExactly(KEY);

        assertThat(aenv("help", "list")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("Usage: aenv list");
        assertThat(aenv("--help")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("snapshots", "templates", "volume", "completion");
        assertThat(aenv("lst")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("Unmatched argument", "list");
    }

    @Test
    void create_posts_a_v2_body_with_the_key_and_prints_the_id() {
        answer("POST /v2/sandboxes", 201, SANDBOX);
        int code = aenv(
                "create",
                "base",
                "--timeout",
                "60",
                "--metadata",
                "team=ml",
                "--env",
                "FOO=bar",
                "--on-timeout",
                "pause");
        assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8).strip()).isEqualTo(ID);
        Recorded request = only();
        assertThat(request.apiKeys()).containsExactly(KEY);
        assertThat(request.body())
                .contains("\"templateID\":\"base\"")
                .contains("\"timeout\":60")
                .contains("\"metadata\":{\"team\":\"ml\"}")
                .contains("\"envVars\":{\"FOO\":\"bar\"}")
                .contains("\"autoPause\":true");
    }

    @Test
    void list_follows_next_tokens_and_prints_a_table() {
        answer("GET /v2/sandboxes", 200, "[" + LISTED.formatted(ID, "running") + "]", Map.of("X-Next-Token", "tok1"));
        answer("GET /v2/sandboxes", 200, "[" + LISTED.formatted("zzzzzzzzzzzzzzzzzzzz", "paused") + "]");
        int code = aenv("list");
        assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();
        assertThat(requests).hasSize(2);
        assertThat(new ArrayList<>(requests).get(1).rawQuery()).contains("nextToken=tok1");
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains("SANDBOX ID")
                .contains(ID)
                .contains("zzzzzzzzzzzzzzzzzzzz")
                .contains("paused");
    }

    @Test
    void list_encodes_the_metadata_filter_the_way_the_server_decodes_it() {
        answer("GET /v2/sandboxes", 200, "[]");
        assertThat(aenv("list", "--state", "running", "--metadata", "user name=a b&c=d"))
                .isZero();
        String rawQuery = only().rawQuery();
        Map<String, String> params = new HashMap<>();
        for (String p : rawQuery.split("&")) {
            int eq = p.indexOf('=');
            params.put(
                    p.substring(0, eq),
                    URLDecoder.decode(p.substring(eq + 1), StandardCharsets.UTF_8)); // framework decode
        }
        assertThat(params.get("state")).isEqualTo("running");
        // the server unescapes the whole value once more, splits, then unescapes each key and value
        String twice = URLDecoder.decode(params.get("metadata"), StandardCharsets.UTF_8);
        Map<String, String> decoded = new LinkedHashMap<>();
        for (String pair : twice.split("&")) {
            int eq = pair.indexOf('=');
            decoded.put(
                    URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                    URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
        }
        assertThat(decoded).isEqualTo(Map.of("user name", "a b&c=d"));
    }

    @Test
    void info_prints_the_wire_json_with_output_json() {
        answer("GET /sandboxes/" + ID, 200, """
                {"templateID":"base","sandboxID":"%s","clientID":"","startedAt":"2026-01-01T00:00:00Z","endAt":"2026-01-01T00:05:00Z",
                 "envdVersion":"0.6.13","envdAccessToken":"secret-token","domain":null,"cpuCount":2,"memoryMB":512,"diskSizeMB":1024,"metadata":{},"state":"running",
                 "allowInternetAccess":null,"lifecycle":{"autoResume":false,"onTimeout":"kill"}}""".formatted(ID));
        assertThat(aenv("info", ID, "-o", "json"))
                .as(err.toString(StandardCharsets.UTF_8))
                .isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains("\"sandboxID\" : \"" + ID + "\"")
                .contains("\"state\" : \"running\"")
                .doesNotContain("envdAccessToken")
                .doesNotContain("secret-token");
    }

    @Test
    void killing_a_missing_sandbox_exits_1_with_the_reason() {
        answer("DELETE /sandboxes/" + ID, 204, "");
        assertThat(aenv("kill", ID)).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("killed " + ID);
        assertThat(aenv("kill", ID)).isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("not found");
    }

    @Test
    void pausing_twice_reports_already_paused_without_failing() {
        answer("POST /sandboxes/" + ID + "/pause", 204, "");
        answer("POST /sandboxes/" + ID + "/pause", 409, "{\"code\":409,\"message\":\"already paused\"}");
        assertThat(aenv("pause", ID)).isZero();
        assertThat(aenv("pause", ID)).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains("paused " + ID)
                .contains("was already paused");
    }

    @Test
    void connect_says_whether_it_resumed_and_sends_the_timeout() {
        answer("POST /v2/sandboxes/" + ID + "/connect", 201, SANDBOX);
        answer("POST /v2/sandboxes/" + ID + "/connect", 200, SANDBOX);
        assertThat(aenv("connect", ID, "--timeout", "120")).isZero();
        assertThat(aenv("resume", ID)).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains("resumed " + ID)
                .contains("running " + ID);
        assertThat(requests.getFirst().body()).isEqualTo("{\"timeout\":120}");
    }

    @Test
    void set_timeout_fork_snapshot_and_snapshots_call_their_routes() {
        answer("POST /sandboxes/" + ID + "/timeout", 204, "");
        answer(
                "POST /sandboxes/" + ID + "/fork",
                201,
                "[{\"sandbox\":" + SANDBOX + "},{\"error\":{\"code\":500,\"message\":\"restore failed\"}}]");
        answer(
                "POST /sandboxes/" + ID + "/snapshots",
                201,
                "{\"snapshotID\":\"snap1\",\"names\":[\"n\"],\"cpuCount\":2,\"memoryMB\":512,\"diskSizeMB\":1024,\"createdAt\":\"2026-01-01T00:00:00Z\",\"updatedAt\":\"2026-01-01T00:00:00Z\"}");
        answer(
                "GET /snapshots",
                200,
                "[{\"snapshotID\":\"snap1\",\"names\":[\"n\"],\"cpuCount\":2,\"memoryMB\":512,\"diskSizeMB\":1024,\"createdAt\":\"2026-01-01T00:00:00Z\",\"updatedAt\":\"2026-01-01T00:00:00Z\"}]");

        assertThat(aenv("set-timeout", ID, "30")).isZero();
        assertThat(aenv("fork", ID, "--count", "2", "-o", "json")).isEqualTo(1); // one child failed
        assertThat(aenv("snapshot", ID, "--name", "n")).isZero();
        assertThat(aenv("snapshots", "--sandbox-id", ID)).isZero();

        List<Recorded> all = new ArrayList<>(requests);
        assertThat(all).extracting(Recorded::method).containsExactly("POST", "POST", "POST", "GET");
        assertThat(all.get(0).body()).isEqualTo("{\"timeout\":30}");
        assertThat(all.get(1).body()).contains("\"count\":2");
        assertThat(all.get(2).body()).isEqualTo("{\"name\":\"n\"}");
        assertThat(all.get(3).rawQuery()).contains("sandboxID=" + ID);
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains("restore failed")
                .contains("snap1")
                .doesNotContain("envdAccessToken");
    }

    @Test
    void a_rejected_key_exits_1_with_a_hint_and_a_missing_key_is_a_usage_error() {
        answer("GET /sandboxes/" + ID, 401, "{\"code\":401,\"message\":\"invalid API key\"}");
        assertThat(aenv("info", ID)).isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("invalid API key")
                .contains("AENV_API_KEY");

        ByteArrayOutputStream err2 = new ByteArrayOutputStream();
        int code = Aenv.run(
                new String[] {"list"},
                Collections.emptyMap(),
                new Stdio(InputStream.nullInputStream(), new ByteArrayOutputStream(), err2, false),
                hook -> {});
        assertThat(code).isEqualTo(2);
        assertThat(err2.toString(StandardCharsets.UTF_8)).contains("no API key");
    }

    @Test
    void an_unreachable_server_exits_1() {
        int port = http.getAddress().getPort();
        http.stop(0);
        int code = Aenv.run(
                new String[] {"list", "--api-url", "http://127.0.0.1:" + port},
                Map.of("AENV_API_KEY", KEY),
                stdio(),
                hook -> {});
        assertThat(code).isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("cannot reach");
    }
}
