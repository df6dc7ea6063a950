package io.agentenv.cli;

import static io.agentenv.cli.FakeSandboxServer.ID;
import static io.agentenv.cli.FakeSandboxServer.TOKEN;
import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.envd.protocol.connect.RpcException;
import io.agentenv.envd.protocol.filesystem.EntryInfo;
import io.agentenv.envd.protocol.filesystem.FileType;
import io.agentenv.envd.protocol.filesystem.ListDirRequest;
import io.agentenv.envd.protocol.filesystem.ListDirResponse;
import io.agentenv.envd.protocol.filesystem.RemoveRequest;
import io.agentenv.envd.protocol.filesystem.RemoveResponse;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * aenv files, logs, metrics, templates and network, and the sandbox access errors, against an in-process fake of the
 * server and its proxied envd.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class FilesAndControlPlaneCommandsTest {
    private CliFixture cli;
    private FakeSandboxServer server;

    @BeforeEach
    void start() throws IOException {
        cli = new CliFixture();
        server = cli.server();
    }

    @AfterEach
    void stop() {
        cli.close();
    }

    private int aenv(InputStream stdin, boolean terminal, String... args) {
        return cli.run(stdin, terminal, args);
    }

    private int aenv(String... args) {
        return cli.run(args);
    }

    private String stdout() {
        return cli.stdout();
    }

    private String stderr() {
        return cli.stderr();
    }

    @Test
    void a_paused_or_unknown_sandbox_is_refused_before_any_envd_call() {
        server.state = "paused";
        assertThat(aenv("exec", ID, "--", "true")).isEqualTo(1);
        assertThat(stderr())
                .isEqualTo("error: sandbox " + ID + " is paused (resume it with: aenv connect " + ID + ")\n");
        assertThat(aenv("files", "ls", "zzzzzzzzzzzzzzzzzzzz", "/")).isEqualTo(1);
        assertThat(stderr()).contains("sandbox not found");
        assertThat(server.requests).allMatch(r -> r.header("E2b-Sandbox-Id") == null);
    }

    @Test
    void a_refused_token_is_one_error_line_that_never_shows_the_token() throws IOException {
        server.envd(
                "/filesystem.Filesystem/ListDir",
                (request, ex) ->
                        FakeSandboxServer.json(ex, 401, "{\"code\":401,\"message\":\"invalid access token\"}"));
        assertThat(aenv("files", "ls", ID, "/")).isEqualTo(1);
        assertThat(stderr()).isEqualTo("error: the sandbox refused access (invalid access token)\n");
        assertThat(stdout() + stderr()).doesNotContain(TOKEN);
    }

    @Test
    void files_get_writes_stdout_or_a_file_and_a_failed_download_leaves_no_file(@TempDir Path dir) throws IOException {
        byte[] content = new byte[70_000];
        new Random(2).nextBytes(content);
        server.envd("/files", (request, ex) -> {
            if (request.uri().contains("missing")) {
                FakeSandboxServer.json(ex, 404, "{\"code\":404,\"message\":\"path '/missing' does not exist\"}");
                return;
            }
            ex.sendResponseHeaders(200, content.length);
            ex.getResponseBody().write(content);
        });

        assertThat(aenv("files", "get", ID, "/data/a b.bin")).as(stderr()).isZero();
        assertThat(cli.stdoutBytes()).isEqualTo(content);
        assertThat(server.envdRequests("/files").getFirst().uri()).isEqualTo("/files?path=%2Fdata%2Fa%20b.bin");

        assertThat(aenv("files", "get", ID, "/data/a b.bin", dir.toString(), "--user", "root"))
                .as(stderr())
                .isZero();
        assertThat(Files.readAllBytes(dir.resolve("a b.bin"))).isEqualTo(content);
        assertThat(server.envdRequests("/files").getLast().uri()).endsWith("&username=root");

        assertThat(aenv("files", "get", ID, "/missing", dir.resolve("m.bin").toString()))
                .isEqualTo(1);
        assertThat(stderr())
                .isEqualTo(
                        "error: envd of sandbox " + ID + " answered 404 to /files: path '/missing' does not exist\n");
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()).toList()).containsExactly("a b.bin");
        }
    }

    @Test
    void files_put_streams_the_bytes_as_octet_stream_from_a_file_or_stdin(@TempDir Path dir) throws IOException {
        server.envd(
                "/files",
                (request, ex) -> FakeSandboxServer.json(
                        ex, 200, "[{\"path\":\"/home/user/x.bin\",\"name\":\"x.bin\",\"type\":\"file\"}]"));
        byte[] content = new byte[50_000];
        new Random(3).nextBytes(content);
        Path local = dir.resolve("x.bin");
        Files.write(local, content);

        assertThat(aenv("files", "put", ID, local.toString(), "x.bin"))
                .as(stderr())
                .isZero();
        assertThat(aenv(new ByteArrayInputStream(content), false, "files", "put", ID, "-", "x.bin"))
                .as(stderr())
                .isZero();

        assertThat(stdout()).isEqualTo("wrote /home/user/x.bin\nwrote /home/user/x.bin\n");
        for (FakeSandboxServer.Request r : server.envdRequests("/files")) {
            assertThat(r.method()).isEqualTo("POST");
            assertThat(r.uri()).isEqualTo("/files?path=x.bin");
            assertThat(r.header("Content-Type")).isEqualTo("application/octet-stream");
            assertThat(r.body()).isEqualTo(content);
        }
        assertThat(aenv("files", "put", ID, dir.resolve("nope").toString(), "x"))
                .isEqualTo(2);
        assertThat(stderr()).contains("no such local file");
    }

    @Test
    void files_ls_prints_a_table_and_rm_removes_with_the_path_as_given() throws IOException {
        server.envd(
                "/filesystem.Filesystem/ListDir",
                (request, ex) -> FakeSandboxServer.unary(
                        ex,
                        ListDirResponse.newBuilder()
                                .addEntries(EntryInfo.newBuilder()
                                        .setName("a.txt")
                                        .setPath("/tmp/a.txt")
                                        .setType(FileType.FILE_TYPE_FILE)
                                        .setSize(3)
                                        .setPermissions("-rw-r--r--")
                                        .setOwner("user")
                                        .setGroup("user"))
                                .addEntries(EntryInfo.newBuilder()
                                        .setName("l")
                                        .setPath("/tmp/l")
                                        .setType(FileType.FILE_TYPE_SYMLINK)
                                        .setSymlinkTarget("/etc")
                                        .setPermissions("lrwxrwxrwx")
                                        .setOwner("root")
                                        .setGroup("root"))
                                .build()));
        server.envd(
                "/filesystem.Filesystem/Remove",
                (request, ex) -> FakeSandboxServer.unary(ex, RemoveResponse.getDefaultInstance()));

        assertThat(aenv("files", "ls", ID, "/tmp", "--depth", "2")).as(stderr()).isZero();
        assertThat(aenv("files", "rm", ID, "/tmp/a.txt")).as(stderr()).isZero();

        ListDirRequest ls = FakeSandboxServer.unaryRequest(
                server.envdRequests("/filesystem.Filesystem/ListDir").getFirst(), ListDirRequest.getDefaultInstance());
        assertThat(ls.getPath()).isEqualTo("/tmp");
        assertThat(ls.getDepth()).isEqualTo(2);
        assertThat(stdout())
                .containsPattern("file\\s+-rw-r--r--\\s+user\\s+user\\s+3\\s+-\\s+/tmp/a.txt")
                .contains("/tmp/l -> /etc")
                .contains("removed /tmp/a.txt");
        RemoveRequest rm = FakeSandboxServer.unaryRequest(
                server.envdRequests("/filesystem.Filesystem/Remove").getFirst(), RemoveRequest.getDefaultInstance());
        assertThat(rm.getPath()).isEqualTo("/tmp/a.txt");
        assertThat(aenv("files", "ls", ID, "/tmp", "--depth", "0")).isEqualTo(2);
    }

    @Test
    void names_and_errors_from_the_sandbox_cannot_write_terminal_escape_sequences() throws IOException {
        server.envd(
                "/filesystem.Filesystem/ListDir",
                (request, ex) -> FakeSandboxServer.unary(
                        ex,
                        ListDirResponse.newBuilder()
                                .addEntries(EntryInfo.newBuilder()
                                        .setName("x\u001b[2J")
                                        .setPath("/tmp/x\u001b[2J")
                                        .setType(FileType.FILE_TYPE_FILE))
                                .build()));
        server.envd(
                "/filesystem.Filesystem/Remove",
                (request, ex) -> FakeSandboxServer.unaryError(
                        ex, RpcException.notFound("path '/tmp/\u001b]0;owned\u0007' does not exist")));

        assertThat(aenv("files", "ls", ID, "/tmp")).isZero();
        assertThat(aenv("files", "rm", ID, "/tmp/y")).isEqualTo(1);

        assertThat(stdout()).contains("/tmp/x\\x1b[2J").doesNotContain("\u001b");
        assertThat(stderr()).isEqualTo("error: [not_found] path '/tmp/\\x1b]0;owned\\x07' does not exist\n");
    }

    @Test
    void an_envd_error_is_printed_with_its_connect_code() {
        server.envd(
                "/filesystem.Filesystem/Remove",
                (request, ex) ->
                        FakeSandboxServer.unaryError(ex, RpcException.notFound("path '/nope' does not exist")));
        assertThat(aenv("files", "rm", ID, "/nope")).isEqualTo(1);
        assertThat(stderr()).isEqualTo("error: [not_found] path '/nope' does not exist\n");
    }

    @Test
    void logs_and_metrics_read_the_control_plane_routes() {
        server.api("GET /v2/sandboxes/" + ID + "/logs", 200, """
                {"logs":[{"timestamp":"2026-01-01T00:00:01Z","level":"info","message":"hello\\n",
                          "fields":{"source":"process","pid":"12","stream":"stdout"}}]}""");
        server.api("GET /sandboxes/" + ID + "/metrics", 200, """
                [{"timestamp":"2026-01-01T00:00:05Z","timestampUnix":1767225605,"cpuCount":2,"cpuUsedPct":12.5,
                  "memUsed":104857600,"memTotal":536870912,"memCache":0,"diskUsed":1048576,"diskTotal":1073741824}]""");

        assertThat(aenv("logs", ID, "--level", "info", "--tail", "--limit", "10"))
                .as(stderr())
                .isZero();
        assertThat(aenv("metrics", ID)).as(stderr()).isZero();

        assertThat(stdout())
                .contains("2026-01-01T00:00:01Z INFO process[12] stdout: hello\n")
                .containsPattern("2026-01-01T00:00:05Z\\s+2\\s+12.5\\s+100\\s+512\\s+1\\s+1024");
        String logsQuery = new ArrayList<>(server.requests)
                .stream()
                        .filter(r -> r.uri().contains("/logs"))
                        .findFirst()
                        .orElseThrow()
                        .uri();
        assertThat(logsQuery)
                .contains("limit=10")
                .contains("direction=backward")
                .contains("level=info");
        assertThat(aenv("logs", ID, "--limit", "0")).isEqualTo(2);
    }

    @Test
    void templates_lists_and_deletes_and_network_puts_the_rules() {
        server.api("GET /templates", 200, """
                [{"templateID":"base","aliases":["py"],"cpuCount":2,"memoryMB":512,"diskSizeMB":1024,"createdAt":"2026-01-01T00:00:00Z"}]""");
        server.api("DELETE /templates/base", 204, "");
        server.api("PUT /sandboxes/" + ID + "/network", 204, "");

        assertThat(aenv("templates")).as(stderr()).isZero();
        assertThat(aenv("templates", "rm", "base")).as(stderr()).isZero();
        assertThat(aenv("templates", "rm", "gone")).isEqualTo(1);
        assertThat(aenv(
                        "network",
                        ID,
                        "--allow-out",
                        "10.0.0.0/8,1.1.1.1/32",
                        "--deny-out",
                        "0.0.0.0/0",
                        "--no-internet"))
                .as(stderr())
                .isZero();

        assertThat(stdout())
                .containsPattern("base\\s+py\\s+-\\s+-\\s+2026-01-01T00:00:00Z")
                .contains("deleted template base")
                .contains("network rules of " + ID + " updated");
        assertThat(stderr()).contains("template gone not found");
        FakeSandboxServer.Request put = server.requests.stream()
                .filter(r -> r.method().equals("PUT"))
                .findFirst()
                .orElseThrow();
        assertThat(put.text())
                .isEqualTo(
                        "{\"allowOut\":[\"10.0.0.0/8\",\"1.1.1.1/32\"],\"denyOut\":[\"0.0.0.0/0\"],\"allow_internet_access\":false}");
    }

    @Test
    void templates_says_so_when_the_server_has_no_template_list() {
        assertThat(aenv("templates")).isEqualTo(1);
        assertThat(stderr()).isEqualTo("error: this server does not list templates (GET /templates answered 404)\n");
    }
}
