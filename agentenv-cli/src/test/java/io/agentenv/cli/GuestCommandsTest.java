package io.agentenv.cli;

import static io.agentenv.cli.FakeSandboxServer.ID;
import static io.agentenv.cli.FakeSandboxServer.KEY;
import static io.agentenv.cli.FakeSandboxServer.TOKEN;
import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.envd.protocol.connect.ConnectCode;
import io.agentenv.envd.protocol.connect.EndStream;
import io.agentenv.envd.protocol.connect.RpcException;
import io.agentenv.envd.protocol.filesystem.EntryInfo;
import io.agentenv.envd.protocol.filesystem.FileType;
import io.agentenv.envd.protocol.filesystem.ListDirRequest;
import io.agentenv.envd.protocol.filesystem.ListDirResponse;
import io.agentenv.envd.protocol.filesystem.RemoveRequest;
import io.agentenv.envd.protocol.filesystem.RemoveResponse;
import io.agentenv.envd.protocol.process.CloseStdinResponse;
import io.agentenv.envd.protocol.process.ProcessEvent;
import io.agentenv.envd.protocol.process.SendInputRequest;
import io.agentenv.envd.protocol.process.SendInputResponse;
import io.agentenv.envd.protocol.process.SendSignalRequest;
import io.agentenv.envd.protocol.process.SendSignalResponse;
import io.agentenv.envd.protocol.process.Signal;
import io.agentenv.envd.protocol.process.StartRequest;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** exec, files, logs, metrics, templates and network against an in-process fake of the server and its proxied envd. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class GuestCommandsTest {
    private FakeSandboxServer server;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final AtomicReference<Runnable> interruptHook = new AtomicReference<>();

    @BeforeEach
    void start() throws IOException {
        server = new FakeSandboxServer();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private int aenv(InputStream stdin, boolean terminal, String... args) {
        Map<String, String> env = Map.of("AENV_API_URL", server.url(), "AENV_API_KEY", KEY);
        return Aenv.run(args, env, new Stdio(stdin, out, err, terminal), interruptHook::set);
    }

    private int aenv(String... args) {
        return aenv(InputStream.nullInputStream(), true, args);
    }

    private String stdout() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String stderr() {
        return err.toString(StandardCharsets.UTF_8);
    }

    private static void await(BooleanSupplier condition, String what) {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(10));
        while (!condition.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("timed out waiting for " + what);
            }
            LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
        }
    }

    /** A Start that answers with these events and a clean end of stream. */
    private void startAnswers(ProcessEvent... events) {
        server.envd("/process.Process/Start", (request, ex) -> {
            OutputStream stream = FakeSandboxServer.openStream(ex);
            for (ProcessEvent e : events) {
                FakeSandboxServer.event(stream, e);
            }
            FakeSandboxServer.endStream(stream, EndStream.ok());
        });
    }

    @Test
    void exec_starts_a_login_bash_with_the_quoted_argv_env_cwd_user_and_timeout_through_the_proxy() throws IOException {
        startAnswers(FakeSandboxServer.start(42), FakeSandboxServer.stdout("out\n"), FakeSandboxServer.stderr("err\n"),
                FakeSandboxServer.exited(7));

        int code = aenv("exec", ID, "--user", "root", "--cwd", "/tmp", "--env", "A=b c", "--timeout", "30", "--",
                "printf", "%s|", "a b", "it's", "");

        assertThat(code).as(stderr()).isEqualTo(7);
        assertThat(stdout()).isEqualTo("out\n");
        assertThat(stderr()).isEqualTo("err\n");
        FakeSandboxServer.Request request = server.envdRequests("/process.Process/Start").getFirst();
        StartRequest start = FakeSandboxServer.streamRequest(request, StartRequest.getDefaultInstance());
        assertThat(start.getProcess().getCmd()).isEqualTo("/bin/bash");
        assertThat(start.getProcess().getArgsList()).containsExactly("-l", "-c", "printf '%s|' 'a b' 'it'\\''s' ''");
        assertThat(start.getProcess().getEnvsMap()).isEqualTo(Map.of("A", "b c"));
        assertThat(start.getProcess().getCwd()).isEqualTo("/tmp");
        assertThat(start.hasStdin()).isTrue();
        assertThat(start.getStdin()).as("a terminal's stdin is not forwarded").isFalse();
        assertThat(request.header("Content-Type")).isEqualTo("application/connect+json");
        assertThat(request.header("Connect-Timeout-Ms")).isEqualTo("30000");
        assertThat(request.header("Authorization")).isEqualTo("Basic " + Base64.getEncoder().encodeToString("root:".getBytes(StandardCharsets.UTF_8)));
        assertThat(request.header("X-API-Key")).as("the API key is not sent to the sandbox").isNull();
    }

    @Test
    void exec_forwards_a_piped_stdin_in_order_then_closes_it() throws IOException {
        CountDownLatch closed = new CountDownLatch(1);
        server.envd("/process.Process/SendInput", (request, ex) -> FakeSandboxServer.unary(ex, SendInputResponse.getDefaultInstance()));
        server.envd("/process.Process/CloseStdin", (request, ex) -> {
            closed.countDown();
            FakeSandboxServer.unary(ex, CloseStdinResponse.getDefaultInstance());
        });
        server.envd("/process.Process/Start", (request, ex) -> {
            OutputStream stream = FakeSandboxServer.openStream(ex);
            FakeSandboxServer.event(stream, FakeSandboxServer.start(9));
            try {
                assertThat(closed.await(10, TimeUnit.SECONDS)).as("stdin closed").isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            FakeSandboxServer.event(stream, FakeSandboxServer.exited(0));
            FakeSandboxServer.endStream(stream, EndStream.ok());
        });
        byte[] input = new byte[100_000];
        new Random(1).nextBytes(input);

        int code = aenv(new ByteArrayInputStream(input), false, "exec", ID, "--", "cat");

        assertThat(code).as(stderr()).isZero();
        StartRequest start = FakeSandboxServer.streamRequest(server.envdRequests("/process.Process/Start").getFirst(),
                StartRequest.getDefaultInstance());
        assertThat(start.getStdin()).isTrue();
        ByteArrayOutputStream sent = new ByteArrayOutputStream();
        for (FakeSandboxServer.Request r : server.envdRequests("/process.Process/SendInput")) {
            SendInputRequest in = FakeSandboxServer.unaryRequest(r, SendInputRequest.getDefaultInstance());
            assertThat(in.getProcess().getPid()).isEqualTo(9);
            in.getInput().getStdin().writeTo(sent);
        }
        assertThat(sent.toByteArray()).isEqualTo(input);
        assertThat(server.envdRequests("/process.Process/CloseStdin")).hasSize(1);
    }

    @Test
    void ctrl_c_sends_sigterm_to_the_running_command_and_its_end_is_reported_as_128_plus_15() throws IOException {
        CountDownLatch signalled = new CountDownLatch(1);
        server.envd("/process.Process/SendSignal", (request, ex) -> {
            signalled.countDown();
            FakeSandboxServer.unary(ex, SendSignalResponse.getDefaultInstance());
        });
        server.envd("/process.Process/Start", (request, ex) -> {
            OutputStream stream = FakeSandboxServer.openStream(ex);
            FakeSandboxServer.event(stream, FakeSandboxServer.start(77));
            FakeSandboxServer.event(stream, FakeSandboxServer.stdout("ready\n"));
            try {
                assertThat(signalled.await(10, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            FakeSandboxServer.event(stream, ProcessEvent.newBuilder().setEnd(ProcessEvent.EndEvent.newBuilder()
                    .setExitCode(-1).setExited(false).setStatus("signal: terminated")).build());
            FakeSandboxServer.endStream(stream, EndStream.ok());
        });
        AtomicReference<Integer> code = new AtomicReference<>();
        Thread run = Thread.ofVirtual().start(() -> code.set(aenv("exec", ID, "--", "sleep", "100")));

        await(() -> stdout().contains("ready"), "the command's first output");
        interruptHook.get().run();
        await(() -> !run.isAlive(), "aenv to return");

        assertThat(code.get()).isEqualTo(143);
        SendSignalRequest signal = FakeSandboxServer.unaryRequest(server.envdRequests("/process.Process/SendSignal").getFirst(),
                SendSignalRequest.getDefaultInstance());
        assertThat(signal.getProcess().getPid()).isEqualTo(77);
        assertThat(signal.getSignal()).isEqualTo(Signal.SIGNAL_SIGTERM);
        assertThat(stderr()).contains("interrupted: sent SIGTERM");
        interruptHook.get().run(); // after the end: nothing more is sent
        assertThat(server.envdRequests("/process.Process/SendSignal")).hasSize(1);
    }

    @Test
    void ctrl_c_before_envd_reported_the_pid_waits_for_it_and_then_terminates_the_command() {
        CountDownLatch releaseStart = new CountDownLatch(1);
        CountDownLatch signalled = new CountDownLatch(1);
        server.envd("/process.Process/SendSignal", (request, ex) -> {
            signalled.countDown();
            FakeSandboxServer.unary(ex, SendSignalResponse.getDefaultInstance());
        });
        server.envd("/process.Process/Start", (request, ex) -> {
            OutputStream stream = FakeSandboxServer.openStream(ex);
            try {
                assertThat(releaseStart.await(10, TimeUnit.SECONDS)).isTrue();
                FakeSandboxServer.event(stream, FakeSandboxServer.start(31));
                assertThat(signalled.await(10, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            FakeSandboxServer.event(stream, ProcessEvent.newBuilder().setEnd(ProcessEvent.EndEvent.newBuilder()
                    .setExitCode(-1).setExited(false).setStatus("signal: terminated")).build());
            FakeSandboxServer.endStream(stream, EndStream.ok());
        });
        AtomicReference<Integer> code = new AtomicReference<>();
        Thread run = Thread.ofVirtual().start(() -> code.set(aenv("exec", ID, "--", "sleep", "100")));
        await(() -> !server.envdRequests("/process.Process/Start").isEmpty() && interruptHook.get() != null, "the Start call");

        Thread hook = Thread.ofPlatform().start(interruptHook.get());
        await(() -> hook.getState() == Thread.State.TIMED_WAITING, "the interrupt to wait for the pid");
        releaseStart.countDown();
        await(() -> !run.isAlive() && !hook.isAlive(), "aenv and the interrupt to finish");

        assertThat(code.get()).isEqualTo(143);
        assertThat(FakeSandboxServer.unaryRequest(server.envdRequests("/process.Process/SendSignal").getFirst(),
                SendSignalRequest.getDefaultInstance()).getProcess().getPid()).isEqualTo(31);
    }

    @Test
    void a_closed_local_stdout_terminates_the_command_and_exits_141_like_sigpipe() {
        server.envd("/process.Process/SendSignal", (request, ex) -> FakeSandboxServer.unary(ex, SendSignalResponse.getDefaultInstance()));
        startAnswers(FakeSandboxServer.start(8), FakeSandboxServer.stdout("y\n"), FakeSandboxServer.stdout("y\n"),
                FakeSandboxServer.exited(0));
        OutputStream closedPipe = new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw new IOException("Broken pipe");
            }
        };
        Map<String, String> env = Map.of("AENV_API_URL", server.url(), "AENV_API_KEY", KEY);

        int code = Aenv.run(new String[] {"exec", ID, "--", "yes"}, env, new Stdio(InputStream.nullInputStream(), closedPipe, err, true),
                hook -> { });

        assertThat(code).isEqualTo(141);
        assertThat(FakeSandboxServer.unaryRequest(server.envdRequests("/process.Process/SendSignal").getFirst(),
                SendSignalRequest.getDefaultInstance()).getSignal()).isEqualTo(Signal.SIGNAL_SIGTERM);
    }

    @Test
    void exec_exits_124_when_envd_ends_the_call_at_its_deadline() {
        server.envd("/process.Process/Start", (request, ex) -> {
            OutputStream stream = FakeSandboxServer.openStream(ex);
            FakeSandboxServer.event(stream, FakeSandboxServer.start(5));
            FakeSandboxServer.endStream(stream, EndStream.failed(new RpcException(ConnectCode.DEADLINE_EXCEEDED, "deadline exceeded")));
        });
        assertThat(aenv("exec", ID, "--timeout", "1", "--", "sleep", "9")).isEqualTo(124);
        assertThat(stderr()).contains("timed out after 1 s");
    }

    @Test
    void exit_codes_follow_the_shell_convention() {
        assertThat(RemoteCommand.exitCode(FakeSandboxServer.exited(3).getEnd())).isEqualTo(3);
        assertThat(RemoteCommand.exitCode(end(false, -1, "signal: killed"))).isEqualTo(137);
        assertThat(RemoteCommand.exitCode(end(false, -1, "signal: segmentation fault (core dumped)"))).isEqualTo(139);
        assertThat(RemoteCommand.exitCode(end(false, -1, "unknown"))).isEqualTo(255);
        assertThat(RemoteCommand.exitCode(end(true, 300, "exit status 300"))).isEqualTo(255);
    }

    private static ProcessEvent.EndEvent end(boolean exited, int code, String status) {
        return ProcessEvent.EndEvent.newBuilder().setExited(exited).setExitCode(code).setStatus(status).build();
    }

    @Test
    void quoting_an_argv_keeps_plain_words_and_single_quotes_the_rest() {
        assertThat(ExecCommand.quote(List.of("ls", "-la", "/tmp/a_b.c", "a b", "$HOME", "it's", "", "~")))
                .isEqualTo("ls -la /tmp/a_b.c 'a b' '$HOME' 'it'\\''s' '' '~'");
    }

    @Test
    void a_stream_without_an_end_event_or_end_frame_is_an_error_not_a_success() {
        server.envd("/process.Process/Start", (request, ex) -> {
            OutputStream stream = FakeSandboxServer.openStream(ex);
            FakeSandboxServer.event(stream, FakeSandboxServer.start(5));
        });
        assertThat(aenv("exec", ID, "--", "true")).isEqualTo(1);
        assertThat(stderr()).startsWith("error: [unknown] the stream ended without its end frame");
    }

    @Test
    void exec_usage_errors_exit_2() {
        assertThat(aenv("exec", ID)).isEqualTo(2);
        assertThat(aenv("exec", ID, "-c", "ls", "--", "ls")).isEqualTo(2);
        assertThat(aenv("exec", ID, "--stdin", "--no-stdin", "--", "ls")).isEqualTo(2);
        assertThat(stderr()).contains("no command").contains("not both").contains("exclude each other");
        assertThat(server.envdRequests("/process.Process/Start")).isEmpty();
    }

    @Test
    void a_paused_or_unknown_sandbox_is_refused_before_any_envd_call() {
        server.state = "paused";
        assertThat(aenv("exec", ID, "--", "true")).isEqualTo(1);
        assertThat(stderr()).isEqualTo("error: sandbox " + ID + " is paused (resume it with: aenv connect " + ID + ")\n");
        assertThat(aenv("files", "ls", "zzzzzzzzzzzzzzzzzzzz", "/")).isEqualTo(1);
        assertThat(stderr()).contains("sandbox not found");
        assertThat(server.requests).allMatch(r -> r.header("E2b-Sandbox-Id") == null);
    }

    @Test
    void a_refused_token_is_one_error_line_that_never_shows_the_token() throws IOException {
        server.envd("/filesystem.Filesystem/ListDir", (request, ex) -> FakeSandboxServer.json(ex, 401, "{\"code\":401,\"message\":\"invalid access token\"}"));
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
        assertThat(out.toByteArray()).isEqualTo(content);
        assertThat(server.envdRequests("/files").getFirst().uri()).isEqualTo("/files?path=%2Fdata%2Fa%20b.bin");

        assertThat(aenv("files", "get", ID, "/data/a b.bin", dir.toString(), "--user", "root")).as(stderr()).isZero();
        assertThat(Files.readAllBytes(dir.resolve("a b.bin"))).isEqualTo(content);
        assertThat(server.envdRequests("/files").getLast().uri()).endsWith("&username=root");

        assertThat(aenv("files", "get", ID, "/missing", dir.resolve("m.bin").toString())).isEqualTo(1);
        assertThat(stderr()).isEqualTo("error: path '/missing' does not exist\n");
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()).toList()).containsExactly("a b.bin");
        }
    }

    @Test
    void files_put_streams_the_bytes_as_octet_stream_from_a_file_or_stdin(@TempDir Path dir) throws IOException {
        server.envd("/files", (request, ex) -> FakeSandboxServer.json(ex, 200, "[{\"path\":\"/home/user/x.bin\",\"name\":\"x.bin\",\"type\":\"file\"}]"));
        byte[] content = new byte[50_000];
        new Random(3).nextBytes(content);
        Path local = dir.resolve("x.bin");
        Files.write(local, content);

        assertThat(aenv("files", "put", ID, local.toString(), "x.bin")).as(stderr()).isZero();
        assertThat(aenv(new ByteArrayInputStream(content), false, "files", "put", ID, "-", "x.bin")).as(stderr()).isZero();

        assertThat(stdout()).isEqualTo("wrote /home/user/x.bin\nwrote /home/user/x.bin\n");
        for (FakeSandboxServer.Request r : server.envdRequests("/files")) {
            assertThat(r.method()).isEqualTo("POST");
            assertThat(r.uri()).isEqualTo("/files?path=x.bin");
            assertThat(r.header("Content-Type")).isEqualTo("application/octet-stream");
            assertThat(r.body()).isEqualTo(content);
        }
        assertThat(aenv("files", "put", ID, dir.resolve("nope").toString(), "x")).isEqualTo(2);
        assertThat(stderr()).contains("no such local file");
    }

    @Test
    void files_ls_prints_a_table_and_rm_removes_with_the_path_as_given() throws IOException {
        server.envd("/filesystem.Filesystem/ListDir", (request, ex) -> FakeSandboxServer.unary(ex, ListDirResponse.newBuilder()
                .addEntries(EntryInfo.newBuilder().setName("a.txt").setPath("/tmp/a.txt").setType(FileType.FILE_TYPE_FILE)
                        .setSize(3).setPermissions("-rw-r--r--").setOwner("user").setGroup("user"))
                .addEntries(EntryInfo.newBuilder().setName("l").setPath("/tmp/l").setType(FileType.FILE_TYPE_SYMLINK)
                        .setSymlinkTarget("/etc").setPermissions("lrwxrwxrwx").setOwner("root").setGroup("root"))
                .build()));
        server.envd("/filesystem.Filesystem/Remove", (request, ex) -> FakeSandboxServer.unary(ex, RemoveResponse.getDefaultInstance()));

        assertThat(aenv("files", "ls", ID, "/tmp", "--depth", "2")).as(stderr()).isZero();
        assertThat(aenv("files", "rm", ID, "/tmp/a.txt")).as(stderr()).isZero();

        ListDirRequest ls = FakeSandboxServer.unaryRequest(server.envdRequests("/filesystem.Filesystem/ListDir").getFirst(),
                ListDirRequest.getDefaultInstance());
        assertThat(ls.getPath()).isEqualTo("/tmp");
        assertThat(ls.getDepth()).isEqualTo(2);
        assertThat(stdout()).containsPattern("file\\s+-rw-r--r--\\s+user\\s+user\\s+3\\s+-\\s+/tmp/a.txt")
                .contains("/tmp/l -> /etc").contains("removed /tmp/a.txt");
        RemoveRequest rm = FakeSandboxServer.unaryRequest(server.envdRequests("/filesystem.Filesystem/Remove").getFirst(),
                RemoveRequest.getDefaultInstance());
        assertThat(rm.getPath()).isEqualTo("/tmp/a.txt");
        assertThat(aenv("files", "ls", ID, "/tmp", "--depth", "0")).isEqualTo(2);
    }

    @Test
    void an_envd_error_is_printed_with_its_connect_code() {
        server.envd("/filesystem.Filesystem/Remove", (request, ex) ->
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

        assertThat(aenv("logs", ID, "--level", "info", "--tail", "--limit", "10")).as(stderr()).isZero();
        assertThat(aenv("metrics", ID)).as(stderr()).isZero();

        assertThat(stdout()).contains("2026-01-01T00:00:01Z INFO process[12] stdout: hello\n")
                .containsPattern("2026-01-01T00:00:05Z\\s+2\\s+12.5\\s+100\\s+512\\s+1\\s+1024");
        String logsQuery = new ArrayList<>(server.requests).stream().filter(r -> r.uri().contains("/logs")).findFirst().orElseThrow().uri();
        assertThat(logsQuery).contains("limit=10").contains("direction=backward").contains("level=info");
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
        assertThat(aenv("network", ID, "--allow-out", "10.0.0.0/8,1.1.1.1/32", "--deny-out", "0.0.0.0/0", "--no-internet")).as(stderr()).isZero();

        assertThat(stdout()).containsPattern("base\\s+py\\s+2\\s+512\\s+1024").contains("deleted template base")
                .contains("network rules of " + ID + " updated");
        assertThat(stderr()).contains("template gone not found");
        FakeSandboxServer.Request put = server.requests.stream().filter(r -> r.method().equals("PUT")).findFirst().orElseThrow();
        assertThat(put.text()).isEqualTo("{\"allowOut\":[\"10.0.0.0/8\",\"1.1.1.1/32\"],\"denyOut\":[\"0.0.0.0/0\"],\"allow_internet_access\":false}");
    }

    @Test
    void templates_says_so_when_the_server_has_no_template_list() {
        assertThat(aenv("templates")).isEqualTo(1);
        assertThat(stderr()).isEqualTo("error: this server does not list templates (GET /templates answered 404)\n");
    }
}
