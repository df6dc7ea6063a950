package io.agentenv.cli;

import static io.agentenv.cli.FakeSandboxServer.KEY;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** aenv auth login/status/logout, the config file's mode, and the precedence of flags, environment and the file. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class AuthCommandTest {
    private static final String WRONG = "e2b_ffffffffffffffffffffffffffffffffffffffff";

    @TempDir
    Path home;

    private FakeSandboxServer server;
    private ByteArrayOutputStream out;
    private ByteArrayOutputStream err;

    @BeforeEach
    void start() throws IOException {
        server = new FakeSandboxServer();
        server.api("GET /v2/sandboxes", 200, "[]");
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private Path config() {
        return home.resolve("xdg").resolve("aenv").resolve("config");
    }

    /** aenv with only XDG_CONFIG_HOME (and HOME) set, plus {@code extra}; stdin is {@code input}, not a terminal. */
    private int aenv(Map<String, String> extra, String input, String... args) {
        Map<String, String> env =
                new HashMap<>(Map.of("XDG_CONFIG_HOME", home.resolve("xdg").toString(), "HOME", home.toString()));
        env.putAll(extra);
        out = new ByteArrayOutputStream();
        err = new ByteArrayOutputStream();
        InputStream in = new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8));
        return Aenv.run(args, env, new Stdio(in, out, err, false), hook -> {});
    }

    private String stdout() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String stderr() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void login_checks_the_key_from_stdin_and_saves_it_with_the_url_for_the_owner_only() throws IOException {
        assertThat(aenv(Map.of(), KEY + "\n", "auth", "login", "--api-url", server.url()))
                .as(stderr())
                .isZero();

        assertThat(stdout())
                .isEqualTo("logged in to " + server.url() + "; saved in " + config() + "\n")
                .doesNotContain(KEY);
        assertThat(Files.readAllLines(config())).contains("api_url=" + server.url(), "api_key=" + KEY);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(config())))
                .isEqualTo("rw-------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(config().getParent())))
                .isEqualTo("rwx------");
        assertThat(server.requests.getLast().header("X-API-Key")).isEqualTo(KEY);

        // a later command, without flags or variables, uses both
        server.requests.clear();
        assertThat(aenv(Map.of(), "", "list")).as(stderr()).isZero();
        assertThat(server.requests.getFirst().header("X-API-Key")).isEqualTo(KEY);
    }

    @Test
    void a_refused_key_is_not_saved() {
        assertThat(aenv(Map.of(), WRONG + "\n", "auth", "login", "--api-url", server.url()))
                .isEqualTo(1);
        assertThat(stderr()).startsWith("error: invalid API key").doesNotContain(WRONG);
        assertThat(config()).doesNotExist();

        assertThat(aenv(Map.of("AENV_API_URL", "http://127.0.0.1:1"), WRONG + "\n", "auth", "login", "--no-verify"))
                .as(stderr())
                .isZero();
        assertThat(stdout()).contains("(not verified)");
        assertThat(config()).exists();
    }

    @Test
    void flags_win_over_the_environment_which_wins_over_the_saved_login() {
        assertThat(aenv(Map.of(), KEY + "\n", "auth", "login", "--api-url", server.url()))
                .isZero();

        assertThat(aenv(Map.of("AENV_API_KEY", WRONG), "", "list")).isEqualTo(1);
        assertThat(stderr()).contains("invalid API key");
        assertThat(aenv(Map.of("AENV_API_KEY", WRONG), "", "list", "--api-key", KEY))
                .as(stderr())
                .isZero();

        assertThat(aenv(Map.of("AENV_API_URL", "http://127.0.0.1:1"), "", "list"))
                .isEqualTo(1);
        assertThat(stderr()).contains("cannot reach http://127.0.0.1:1");
        assertThat(aenv(Map.of("AENV_API_URL", "http://127.0.0.1:1"), "", "list", "--api-url", server.url()))
                .as(stderr())
                .isZero();
    }

    @Test
    void status_says_where_each_setting_comes_from_hiding_the_key_and_logout_forgets_them() {
        assertThat(aenv(Map.of(), "", "auth", "status")).isEqualTo(1);
        assertThat(stdout()).containsPattern("api key\\s+not set");

        assertThat(aenv(Map.of(), KEY + "\n", "auth", "login", "--api-url", server.url()))
                .isZero();
        assertThat(aenv(Map.of(), "", "auth", "status")).as(stderr()).isZero();
        assertThat(stdout())
                .containsPattern("api url\\s+" + server.url() + " \\(" + config() + "\\)")
                .containsPattern("api key\\s+set \\(" + config() + "\\)")
                .contains("the server accepts the key")
                .doesNotContain(KEY);

        assertThat(aenv(Map.of("AENV_API_KEY", WRONG), "", "auth", "status", "-o", "json"))
                .isEqualTo(1);
        assertThat(stdout())
                .contains("\"apiKeySource\" : \"AENV_API_KEY\"")
                .contains("\"ok\" : false")
                .doesNotContain(WRONG);

        assertThat(aenv(Map.of(), "", "auth", "logout")).isZero();
        assertThat(stdout()).isEqualTo("removed " + config() + "\n");
        assertThat(config()).doesNotExist();
        assertThat(aenv(Map.of(), "", "list")).isEqualTo(2);
        assertThat(stderr()).contains("no API key").contains("aenv auth login");
    }
}
