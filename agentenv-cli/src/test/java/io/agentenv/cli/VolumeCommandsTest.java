package io.agentenv.cli;

import static io.agentenv.cli.FakeVolumes.ID;
import static io.agentenv.cli.FakeVolumes.NAME;
import static io.agentenv.cli.FakeVolumes.OTHER_ID;
import static io.agentenv.cli.FakeVolumes.TOKEN;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** aenv volume: the management commands with the API key, the file commands with the volume's token. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class VolumeCommandsTest {
    private CliFixture cli;
    private FakeSandboxServer server;
    private FakeVolumes volumes;
    private final ObjectMapper json = new ObjectMapper();

    @BeforeEach
    void start() throws IOException {
        cli = new CliFixture();
        server = cli.server();
        volumes = new FakeVolumes(server);
    }

    @AfterEach
    void stop() {
        cli.close();
    }

    /** The requests made, as {@code "METHOD /path?query"}. */
    private List<String> lines() {
        return server.requests.stream().map(r -> r.method() + " " + r.uri()).toList();
    }

    private FakeSandboxServer.Request only(String method, String pathPrefix) {
        List<FakeSandboxServer.Request> matching = server.requests.stream()
                .filter(r -> r.method().equals(method) && r.uri().startsWith(pathPrefix))
                .toList();
        assertThat(matching).hasSize(1);
        return matching.getFirst();
    }

    @Test
    void create_posts_the_name_and_size_with_the_api_key_and_prints_the_id() throws IOException {
        assertThat(cli.run("volume", "create", NAME, "--size", "512"))
                .as(cli.stderr())
                .isZero();

        assertThat(cli.stdout()).isEqualTo(ID + "\n");
        FakeSandboxServer.Request create = only("POST", "/volumes");
        assertThat(create.header("X-API-Key")).isEqualTo(FakeSandboxServer.KEY);
        assertThat(create.header("Content-Type")).isEqualTo("application/json");
        assertThat(json.readTree(create.body())).isEqualTo(json.readTree("{\"name\":\"data\",\"sizeMiB\":512}"));
    }

    @Test
    void create_without_a_size_leaves_it_to_the_server_and_json_shows_the_token() throws IOException {
        assertThat(cli.run("-o", "json", "volume", "create", NAME))
                .as(cli.stderr())
                .isZero();

        assertThat(json.readTree(only("POST", "/volumes").body())).isEqualTo(json.readTree("{\"name\":\"data\"}"));
        JsonNode printed = json.readTree(cli.stdout());
        assertThat(printed.get("volumeID").asText()).isEqualTo(ID);
        assertThat(printed.get("name").asText()).isEqualTo(NAME);
        assertThat(printed.get("token").asText()).isEqualTo(TOKEN);
        assertThat(printed.get("sizeMiB").asInt()).isEqualTo(1024);
    }

    @Test
    void create_refuses_a_size_below_one_before_any_request() {
        assertThat(cli.run("volume", "create", NAME, "--size", "0")).isEqualTo(2);
        assertThat(cli.stderr()).isEqualTo("error: --size must be at least 1 (MiB)\n");
        assertThat(server.requests).isEmpty();
    }

    @Test
    void a_refused_name_is_the_servers_message_and_exit_1() {
        server.api("POST /volumes", 409, "{\"code\":409,\"message\":\"a volume named data already exists\"}");
        assertThat(cli.run("volume", "create", NAME)).isEqualTo(1);
        assertThat(cli.stderr()).isEqualTo("error: a volume named data already exists\n");
        assertThat(cli.stdout()).isEmpty();
    }

    @Test
    void ls_prints_the_volumes_as_a_table_or_the_wire_json() throws IOException {
        assertThat(cli.run("volume", "ls")).as(cli.stderr()).isZero();
        assertThat(cli.stdout())
                .isEqualTo("VOLUME ID" + " ".repeat(13) + "NAME\n" + ID + "  data\n" + OTHER_ID + "  scratch\n");

        CliFixture again = new CliFixture();
        try (again) {
            new FakeVolumes(again.server());
            assertThat(again.run("-o", "json", "volume", "list"))
                    .as(again.stderr())
                    .isZero();
            assertThat(json.readTree(again.stdout()))
                    .isEqualTo(json.readTree(
                            "[{\"volumeID\":\"%s\",\"name\":\"data\"},{\"volumeID\":\"%s\",\"name\":\"scratch\"}]"
                                    .formatted(ID, OTHER_ID)));
        }
        assertThat(lines()).containsExactly("GET /volumes");
    }

    @Test
    void info_by_name_shows_id_name_and_size_but_not_the_token() {
        assertThat(cli.run("volume", "info", NAME)).as(cli.stderr()).isZero();

        assertThat(cli.stdout())
                .containsPattern("volume id\\s+" + ID + "\n")
                .containsPattern("name\\s+data\n")
                .containsPattern("size MiB\\s+1024\n")
                .doesNotContain(TOKEN);
        assertThat(lines()).containsExactly("GET /volumes", "GET /volumes/" + ID);
        assertThat(server.requests).allMatch(r -> FakeSandboxServer.KEY.equals(r.header("X-API-Key")));
    }

    @Test
    void info_prints_the_token_alone_with_token_and_in_json() throws IOException {
        assertThat(cli.run("volume", "info", ID, "--token")).as(cli.stderr()).isZero();
        assertThat(cli.stdout()).isEqualTo(TOKEN + "\n");

        assertThat(cli.run("-o", "json", "volume", "info", NAME))
                .as(cli.stderr())
                .isZero();
        JsonNode printed = json.readTree(cli.stdout().substring(TOKEN.length() + 1));
        assertThat(printed)
                .isEqualTo(json.readTree("{\"volumeID\":\"%s\",\"name\":\"data\",\"token\":\"%s\",\"sizeMiB\":1024}"
                        .formatted(ID, TOKEN)));
    }

    @Test
    void an_exact_id_wins_over_a_name_and_an_unknown_volume_is_an_error() {
        // a volume whose name is the other's id: the id names the other one
        server.api("GET /volumes", 200, """
                [{"volumeID":"%s","name":"%s"},{"volumeID":"%s","name":"scratch"}]""".formatted(ID, OTHER_ID, OTHER_ID));

        assertThat(cli.run("volume", "info", OTHER_ID)).as(cli.stderr()).isZero();
        assertThat(lines()).containsExactly("GET /volumes", "GET /volumes/" + OTHER_ID);

        assertThat(cli.run("volume", "info", "nope")).isEqualTo(1);
        assertThat(cli.run("volume", "get", "nope", "/a")).isEqualTo(1);
        assertThat(cli.stderr()).isEqualTo("error: volume nope not found\nerror: volume nope not found\n");
        assertThat(lines()).noneMatch(l -> l.contains("nope"));
    }

    @Test
    void rm_deletes_each_volume_and_reports_the_ones_refused_with_exit_1() {
        int code = cli.run("volume", "rm", NAME, OTHER_ID, "missing");

        assertThat(code).isEqualTo(1);
        assertThat(cli.stdout()).isEqualTo("deleted volume data (" + ID + ")\n");
        assertThat(cli.stderr())
                .isEqualTo("error: volume " + OTHER_ID + " is mounted by sandbox " + FakeSandboxServer.ID + "\n"
                        + "error: volume missing not found\n");
        assertThat(lines()).containsExactly("GET /volumes", "DELETE /volumes/" + ID, "DELETE /volumes/" + OTHER_ID);
    }

    @Test
    void rm_with_json_prints_the_deleted_volumes() throws IOException {
        assertThat(cli.run("-o", "json", "volume", "delete", ID))
                .as(cli.stderr())
                .isZero();
        assertThat(json.readTree(cli.stdout()))
                .isEqualTo(json.readTree("[{\"volumeID\":\"%s\",\"name\":\"data\"}]".formatted(ID)));
    }

    @Test
    void put_sends_a_file_or_stdin_with_the_volume_token_not_the_api_key(@TempDir Path dir) throws IOException {
        byte[] content = new byte[70_000];
        new Random(5).nextBytes(content);
        Path local = dir.resolve("x.bin");
        Files.write(local, content);

        assertThat(cli.run("volume", "put", NAME, local.toString(), "/in/a b.bin"))
                .as(cli.stderr())
                .isZero();
        assertThat(cli.run(new ByteArrayInputStream(content), false, "volume", "put", ID, "-", "piped.bin"))
                .as(cli.stderr())
                .isZero();

        assertThat(cli.stdout()).isEqualTo("wrote /in/a b.bin (68.4 KiB)\nwrote /piped.bin (68.4 KiB)\n");
        List<FakeSandboxServer.Request> puts =
                server.requests.stream().filter(r -> r.method().equals("PUT")).toList();
        assertThat(puts).hasSize(2);
        assertThat(puts.get(0).uri()).isEqualTo("/volumecontent/" + ID + "/file?path=%2Fin%2Fa%20b.bin");
        assertThat(puts.get(0).header("Content-Length")).isEqualTo("70000");
        assertThat(puts.get(1).uri()).isEqualTo("/volumecontent/" + ID + "/file?path=piped.bin");
        for (FakeSandboxServer.Request put : puts) {
            assertThat(put.header("Authorization")).isEqualTo("Bearer " + TOKEN);
            assertThat(put.header("X-API-Key")).isNull();
            assertThat(put.header("Content-Type")).isEqualTo("application/octet-stream");
            assertThat(put.body()).isEqualTo(content);
        }
        assertThat(volumes.files.get("/in/a b.bin")).isEqualTo(content);
        assertThat(lines())
                .containsSubsequence(
                        "GET /volumes", "GET /volumes/" + ID, "PUT /volumecontent/" + ID + "/file?path=piped.bin");
    }

    @Test
    void put_refuses_a_directory_or_a_missing_file(@TempDir Path dir) {
        assertThat(cli.run("volume", "put", NAME, dir.toString(), "/d")).isEqualTo(2);
        assertThat(cli.run("volume", "put", NAME, dir.resolve("nope").toString(), "/d"))
                .isEqualTo(2);
        assertThat(cli.stderr()).contains("is a directory", "no such local file");
        assertThat(server.requests).noneMatch(r -> r.method().equals("PUT"));
    }

    @Test
    void get_writes_stdout_a_file_or_into_a_directory(@TempDir Path dir) throws IOException {
        byte[] content = new byte[50_000];
        new Random(6).nextBytes(content);
        volumes.files.put("/notes/a.bin", content);

        assertThat(cli.run("volume", "get", NAME, "/notes/a.bin"))
                .as(cli.stderr())
                .isZero();
        assertThat(cli.stdoutBytes()).isEqualTo(content);
        assertThat(cli.run(
                        "volume",
                        "get",
                        NAME,
                        "notes/a.bin",
                        dir.resolve("b.bin").toString()))
                .as(cli.stderr())
                .isZero();
        assertThat(cli.run("volume", "get", NAME, "/notes/a.bin", dir.toString()))
                .as(cli.stderr())
                .isZero();

        assertThat(Files.readAllBytes(dir.resolve("b.bin"))).isEqualTo(content);
        assertThat(Files.readAllBytes(dir.resolve("a.bin"))).isEqualTo(content);
        List<FakeSandboxServer.Request> gets = server.requests.stream()
                .filter(r -> r.uri().startsWith("/volumecontent/"))
                .toList();
        assertThat(gets).hasSize(3).allMatch(r -> ("Bearer " + TOKEN).equals(r.header("Authorization")));
        assertThat(gets.getFirst().uri()).isEqualTo("/volumecontent/" + ID + "/file?path=%2Fnotes%2Fa.bin");
    }

    @Test
    void a_missing_path_is_an_error_and_leaves_no_local_file(@TempDir Path dir) throws IOException {
        assertThat(cli.run("volume", "get", NAME, "/missing", dir.resolve("m").toString()))
                .isEqualTo(1);
        assertThat(cli.stderr()).isEqualTo("error: path /missing not found\n");
        try (var listing = Files.list(dir)) {
            assertThat(listing).isEmpty();
        }
    }

    @Test
    void a_refused_token_says_so_and_never_shows_the_token() {
        server.api("GET /volumes/" + ID, 200, FakeVolumes.andToken(ID, NAME, "stale-token"));

        assertThat(cli.run("volume", "ls", NAME)).isEqualTo(1);

        assertThat(cli.stderr()).isEqualTo("error: invalid volume token (the volume's token was refused)\n");
        assertThat(cli.stdout() + cli.stderr()).doesNotContain("stale-token");
    }

    @Test
    void ls_with_a_volume_lists_its_files_as_a_table_or_json() throws IOException {
        volumes.files.put("/notes/", new byte[0]);
        volumes.files.put("/notes/a.txt", "abc".getBytes(StandardCharsets.UTF_8));

        assertThat(cli.run("volume", "ls", NAME)).as(cli.stderr()).isZero();
        assertThat(cli.stdout())
                .containsPattern("TYPE\\s+PERMISSIONS\\s+UID\\s+GID\\s+SIZE\\s+MODIFIED\\s+PATH\n")
                .containsPattern("dir\\s+drwxr-xr-x\\s+1000\\s+1000\\s+4096\\s+2026-01-02T03:04:05Z\\s+/notes\n")
                .containsPattern("file\\s+-rw-r--r--\\s+1000\\s+1000\\s+3\\s+2026-01-02T03:04:05Z\\s+/notes/a.txt\n");

        int before = cli.stdout().length();
        assertThat(cli.run("-o", "json", "volume", "ls", NAME, "/notes", "--depth", "3"))
                .as(cli.stderr())
                .isZero();
        JsonNode printed = json.readTree(cli.stdout().substring(before));
        assertThat(printed).hasSize(1);
        assertThat(printed.get(0).get("path").asText()).isEqualTo("/notes/a.txt");
        assertThat(printed.get(0).get("type").asText()).isEqualTo("file");
        assertThat(printed.get(0).get("mode").asInt()).isEqualTo(0644);
        assertThat(lines())
                .contains(
                        "GET /volumecontent/" + ID + "/dir?path=%2F&depth=1",
                        "GET /volumecontent/" + ID + "/dir?path=%2Fnotes&depth=3");
    }

    @Test
    void depth_is_checked_and_needs_a_volume() {
        assertThat(cli.run("volume", "ls", NAME, "/", "--depth", "0")).isEqualTo(2);
        assertThat(cli.run("volume", "ls", NAME, "/", "--depth", "33")).isEqualTo(2);
        assertThat(cli.run("volume", "ls", "--depth", "2")).isEqualTo(2);
        assertThat(cli.stderr())
                .isEqualTo("error: --depth must be between 1 and 32\n"
                        + "error: --depth must be between 1 and 32\n"
                        + "error: --depth lists files: name the VOLUME\n");
        assertThat(server.requests).isEmpty();
    }

    @Test
    void mkdir_and_delete_path_make_and_remove_entries() {
        assertThat(cli.run("volume", "mkdir", NAME, "/a/b", "-p"))
                .as(cli.stderr())
                .isZero();
        volumes.files.put("/a/b/c.txt", new byte[1]);
        assertThat(cli.run("volume", "delete-path", NAME, "/a"))
                .as(cli.stderr())
                .isZero();
        assertThat(cli.run("volume", "rm-path", NAME, "/a")).isEqualTo(1);

        assertThat(cli.stdout()).isEqualTo("made /a/b\nremoved /a\n");
        assertThat(cli.stderr()).isEqualTo("error: path /a not found\n");
        assertThat(volumes.files).isEmpty();
        assertThat(lines())
                .contains(
                        "POST /volumecontent/" + ID + "/dir?path=%2Fa%2Fb&force=true",
                        "DELETE /volumecontent/" + ID + "/path?path=%2Fa");
    }

    @Test
    void create_sends_each_volume_option_as_a_volume_mount() throws IOException {
        server.api("POST /v2/sandboxes", 201, """
                {"templateID":"base","sandboxID":"%s","clientID":"","envdVersion":"0.6.13"}""".formatted(FakeSandboxServer.ID));

        int code = cli.run(
                "create", "base", "--volume", "data:/data", "--volume", ID + ":/mnt/ref:ro", "--volume", "x:/w:rw");

        assertThat(code).as(cli.stderr()).isZero();
        assertThat(cli.stdout()).isEqualTo(FakeSandboxServer.ID + "\n");
        JsonNode body = json.readTree(only("POST", "/v2/sandboxes").body());
        assertThat(body.get("templateID").asText()).isEqualTo("base");
        assertThat(body.get("volumeMounts")).isEqualTo(json.readTree("""
                        [{"name":"data","path":"/data","readOnly":false},
                         {"name":"%s","path":"/mnt/ref","readOnly":true},
                         {"name":"x","path":"/w","readOnly":false}]""".formatted(ID)));
    }

    @Test
    void create_without_volumes_sends_no_volume_mounts() throws IOException {
        server.api("POST /v2/sandboxes", 201, """
                {"templateID":"base","sandboxID":"%s","clientID":"","envdVersion":"0.6.13"}""".formatted(FakeSandboxServer.ID));

        assertThat(cli.run("create", "base", "--timeout", "60"))
                .as(cli.stderr())
                .isZero();

        assertThat(json.readTree(only("POST", "/v2/sandboxes").body()))
                .isEqualTo(json.readTree("{\"templateID\":\"base\",\"timeout\":60}"));
    }

    @Test
    void a_volume_option_of_another_shape_is_a_usage_error_before_any_request() {
        for (String bad : List.of("data", ":/data", "data:", "data:rel/path", "data:/d:rx", "data:/d:", "data:/:ro")) {
            assertThat(cli.run("create", "base", "--volume", bad)).as(bad).isEqualTo(2);
        }
        assertThat(cli.run("start", "base", "--volume", "data:/d:RO")).isEqualTo(2);

        assertThat(cli.stderr().lines().toList())
                .containsExactly(
                        "error: bad --volume data: name the volume and the path, as NAME:/PATH[:ro|:rw]",
                        "error: bad --volume :/data: name the volume and the path, as NAME:/PATH[:ro|:rw]",
                        "error: bad --volume data:: the path must be absolute (start with /), as in NAME:/PATH[:ro|:rw]",
                        "error: bad --volume data:rel/path: the path must be absolute (start with /), as in"
                                + " NAME:/PATH[:ro|:rw]",
                        "error: bad --volume data:/d:rx: the mode after the path must be ro or rw, not 'rx'",
                        "error: bad --volume data:/d:: the mode after the path must be ro or rw, not ''",
                        "error: bad --volume data:/:ro: a volume cannot be mounted at /",
                        "error: bad --volume data:/d:RO: the mode after the path must be ro or rw, not 'RO'");
        assertThat(server.requests).isEmpty();
    }

    @Test
    void volume_alone_is_a_usage_error_naming_the_subcommands() {
        assertThat(cli.run("volume")).isEqualTo(2);
        assertThat(cli.stderr()).contains("name a subcommand: create, ls, info, rm, put, get");
    }

    @Test
    void permissions_are_drawn_as_ls_draws_them() {
        assertThat(VolumeCommand.permissions("file", 0640)).isEqualTo("-rw-r-----");
        assertThat(VolumeCommand.permissions("directory", 0755)).isEqualTo("drwxr-xr-x");
        assertThat(VolumeCommand.permissions("symlink", 0777)).isEqualTo("lrwxrwxrwx");
        assertThat(VolumeCommand.permissions("unknown", 0)).isEqualTo("?---------");
    }
}
