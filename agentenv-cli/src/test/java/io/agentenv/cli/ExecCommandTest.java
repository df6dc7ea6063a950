package io.agentenv.cli;

import static io.agentenv.cli.FakeSandboxServer.ID;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.agentenv.envd.protocol.connect.ConnectCode;
import io.agentenv.envd.protocol.connect.EndStream;
import io.agentenv.envd.protocol.connect.RpcException;
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
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** aenv exec against an in-process fake of the server and its proxied envd: the Start request, output, stdin, signals, exit codes. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ExecCommandTest {
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
    void exec_starts_a_login_bash_with_quoted_argv_env_cwd_user_and_timeout_via_the_proxy() throws IOException {
        startAnswers(
                FakeSandboxServer.start(42),
                FakeSandboxServer.stdout("out\n"),
                FakeSandboxServer.stderr("err\n"),
                FakeSandboxServer.exited(7));

        int code = aenv(
                "exec",
                ID,
                "--user",
                "root",
                "--cwd",
                "/tmp",
                "--env",
                "A=b c",
                "--timeout",
                "30",
                "--",
                "printf",
                "%s|",
                "a b",
                "it's",
                "");

        assertThat(code).as(stderr()).isEqualTo(7);
        assertThat(stdout()).isEqualTo("out\n");
        assertThat(stderr()).isEqualTo("err\n");
        FakeSandboxServer.Request request =
                server.envdRequests("/process.Process/Start").getFirst();
        StartRequest start = FakeSandboxServer.streamRequest(request, StartRequest.getDefaultInstance());
        assertThat(start.getProcess().getCmd()).isEqualTo("/bin/bash");
        assertThat(start.getProcess().getArgsList()).containsExactly("-l", "-c", "printf '%s|' 'a b' 'it'\\''s' ''");
        assertThat(start.getProcess().getEnvsMap()).isEqualTo(Map.of("A", "b c"));
        assertThat(start.getProcess().getCwd()).isEqualTo("/tmp");
        assertThat(start.hasStdin()).isTrue();
        assertThat(start.getStdin()).as("a terminal's stdin is not forwarded").isFalse();
        assertThat(request.header("Content-Type")).isEqualTo(FakeSandboxServer.CODEC.streamContentType());
        assertThat(request.header("Connect-Timeout-Ms")).isEqualTo("30000");
        assertThat(request.header("Authorization"))
                .isEqualTo("Basic " + Base64.getEncoder().encodeToString("root:".getBytes(StandardCharsets.UTF_8)));
        assertThat(request.header("X-API-Key"))
                .as("the API key is not sent to the sandbox")
                .isNull();
    }

    @Test
    void exec_forwards_a_piped_stdin_in_order_then_closes_it() throws IOException {
        CountDownLatch closed = new CountDownLatch(1);
        server.envd(
                "/process.Process/SendInput",
                (request, ex) -> FakeSandboxServer.unary(ex, SendInputResponse.getDefaultInstance()));
        server.envd("/process.Process/CloseStdin", (request, ex) -> {
            closed.countDown();
            FakeSandboxServer.unary(ex, CloseStdinResponse.getDefaultInstance());
        });
        server.envd("/process.Process/Start", (request, ex) -> {
            OutputStream stream = FakeSandboxServer.openStream(ex);
            FakeSandboxServer.event(stream, FakeSandboxServer.start(9));
            try {
                assertThat(closed.await(10, TimeUnit.SECONDS))
                        .as("stdin closed")
                        .isTrue();
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
        StartRequest start = FakeSandboxServer.streamRequest(
                server.envdRequests("/process.Process/Start").getFirst(), StartRequest.getDefaultInstance());
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
    void ctrl_c_sends_sigterm_to_the_running_command_and_its_end_is_reported_as_143() throws IOException {
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
            FakeSandboxServer.event(
                    stream,
                    ProcessEvent.newBuilder()
                            .setEnd(ProcessEvent.EndEvent.newBuilder()
                                    .setExitCode(-1)
                                    .setExited(false)
                                    .setStatus("signal: terminated"))
                            .build());
            FakeSandboxServer.endStream(stream, EndStream.ok());
        });
        AtomicReference<Integer> code = new AtomicReference<>();
        Thread run = Thread.ofVirtual().start(() -> code.set(aenv("exec", ID, "--", "sleep", "100")));

        CliFixture.await(() -> stdout().contains("ready"), "the command's first output");
        cli.interruptHook().run();
        CliFixture.await(() -> !run.isAlive(), "aenv to return");

        assertThat(code.get()).isEqualTo(143);
        SendSignalRequest signal = FakeSandboxServer.unaryRequest(
                server.envdRequests("/process.Process/SendSignal").getFirst(), SendSignalRequest.getDefaultInstance());
        assertThat(signal.getProcess().getPid()).isEqualTo(77);
        assertThat(signal.getSignal()).isEqualTo(Signal.SIGNAL_SIGTERM);
        assertThat(stderr()).contains("interrupted: sent SIGTERM");
        cli.interruptHook().run(); // after the end: nothing more is sent
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
            FakeSandboxServer.event(
                    stream,
                    ProcessEvent.newBuilder()
                            .setEnd(ProcessEvent.EndEvent.newBuilder()
                                    .setExitCode(-1)
                                    .setExited(false)
                                    .setStatus("signal: terminated"))
                            .build());
            FakeSandboxServer.endStream(stream, EndStream.ok());
        });
        AtomicReference<Integer> code = new AtomicReference<>();
        Thread run = Thread.ofVirtual().start(() -> code.set(aenv("exec", ID, "--", "sleep", "100")));
        CliFixture.await(
                () -> !server.envdRequests("/process.Process/Start").isEmpty() && cli.interruptHook() != null,
                "the Start call");

        Thread hook = Thread.ofPlatform().start(cli.interruptHook());
        CliFixture.await(() -> hook.getState() == Thread.State.TIMED_WAITING, "the interrupt to wait for the pid");
        releaseStart.countDown();
        CliFixture.await(() -> !run.isAlive() && !hook.isAlive(), "aenv and the interrupt to finish");

        assertThat(code.get()).isEqualTo(143);
        assertThat(FakeSandboxServer.unaryRequest(
                                server.envdRequests("/process.Process/SendSignal")
                                        .getFirst(),
                                SendSignalRequest.getDefaultInstance())
                        .getProcess()
                        .getPid())
                .isEqualTo(31);
    }

    @Test
    void a_closed_local_stdout_terminates_the_command_and_exits_141_like_sigpipe() {
        server.envd(
                "/process.Process/SendSignal",
                (request, ex) -> FakeSandboxServer.unary(ex, SendSignalResponse.getDefaultInstance()));
        startAnswers(
                FakeSandboxServer.start(8),
                FakeSandboxServer.stdout("y\n"),
                FakeSandboxServer.stdout("y\n"),
                FakeSandboxServer.exited(0));
        OutputStream closedPipe = new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw new IOException("Broken pipe");
            }
        };
        int code = cli.run(InputStream.nullInputStream(), true, closedPipe, "exec", ID, "--", "yes");

        assertThat(code).isEqualTo(141);
        assertThat(FakeSandboxServer.unaryRequest(
                                server.envdRequests("/process.Process/SendSignal")
                                        .getFirst(),
                                SendSignalRequest.getDefaultInstance())
                        .getSignal())
                .isEqualTo(Signal.SIGNAL_SIGTERM);
    }

    @Test
    void exec_exits_124_when_envd_ends_the_call_at_its_deadline() {
        server.envd("/process.Process/Start", (request, ex) -> {
            OutputStream stream = FakeSandboxServer.openStream(ex);
            FakeSandboxServer.event(stream, FakeSandboxServer.start(5));
            FakeSandboxServer.endStream(
                    stream, EndStream.failed(new RpcException(ConnectCode.DEADLINE_EXCEEDED, "deadline exceeded")));
        });
        assertThat(aenv("exec", ID, "--timeout", "1", "--", "sleep", "9")).isEqualTo(124);
        assertThat(stderr()).contains("timed out after 1 s");
    }

    @Test
    void exit_codes_follow_the_shell_convention() {
        assertThat(RemoteCommand.exitCode(FakeSandboxServer.exited(3).getEnd())).isEqualTo(3);
        assertThat(RemoteCommand.exitCode(end(false, -1, "signal: killed"))).isEqualTo(137);
        assertThat(RemoteCommand.exitCode(end(false, -1, "signal: segmentation fault (core dumped)")))
                .isEqualTo(139);
        assertThat(RemoteCommand.exitCode(end(false, -1, "unknown"))).isEqualTo(255);
        assertThat(RemoteCommand.exitCode(end(true, 300, "exit status 300"))).isEqualTo(255);
    }

    private static ProcessEvent.EndEvent end(boolean exited, int code, String status) {
        return ProcessEvent.EndEvent.newBuilder()
                .setExited(exited)
                .setExitCode(code)
                .setStatus(status)
                .build();
    }

    @Test
    void quoting_an_argv_keeps_plain_words_and_single_quotes_the_rest() {
        assertThat(ExecCommand.quote(List.of("ls", "-la", "/tmp/a_b.c", "a b", "$HOME", "it's", "", "~")))
                .isEqualTo("ls -la /tmp/a_b.c 'a b' '$HOME' 'it'\\''s' '' '~'");
    }

    @Test
    void a_stream_cut_without_its_end_frame_is_an_error_saying_the_sandbox_went_away() {
        server.envd("/process.Process/Start", (request, ex) -> {
            OutputStream stream = FakeSandboxServer.openStream(ex);
            FakeSandboxServer.event(stream, FakeSandboxServer.start(5));
        });
        assertThat(aenv("exec", ID, "--", "true")).isEqualTo(1);
        assertThat(stderr())
                .isEqualTo("error: the stream from sandbox " + ID
                        + " broke off (no end frame); was the sandbox killed or paused?\n");
    }

    @Test
    void a_stream_with_an_end_frame_but_no_exit_status_is_an_error_not_a_success() {
        startAnswers(FakeSandboxServer.start(5), FakeSandboxServer.stdout("partial"));
        assertThat(aenv("exec", ID, "--", "true")).isEqualTo(1);
        assertThat(stderr()).isEqualTo("error: [unknown] the command's stream ended without its exit status\n");
    }

    /** A terminal of a fixed size that counts its mode switches. */
    private static final class FakeTerminal implements Terminal {
        final AtomicInteger raw = new AtomicInteger();
        final AtomicInteger restored = new AtomicInteger();

        @Override
        public Optional<Size> size() {
            return Optional.of(new Size(120, 40));
        }

        @Override
        public Runnable enterRawMode() {
            raw.incrementAndGet();
            return restored::incrementAndGet;
        }
    }

    @Test
    void tty_starts_a_login_shell_on_a_sized_pty_sends_keys_and_restores_the_terminal() throws IOException {
        CountDownLatch typed = new CountDownLatch(1);
        server.envd("/process.Process/SendInput", (request, ex) -> {
            typed.countDown();
            FakeSandboxServer.unary(ex, SendInputResponse.getDefaultInstance());
        });
        server.envd("/process.Process/Start", (request, ex) -> {
            OutputStream stream = FakeSandboxServer.openStream(ex);
            FakeSandboxServer.event(stream, FakeSandboxServer.start(12));
            try {
                assertThat(typed.await(10, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            FakeSandboxServer.event(
                    stream,
                    ProcessEvent.newBuilder()
                            .setData(ProcessEvent.DataEvent.newBuilder().setPty(ByteString.copyFromUtf8("$ exit\r\n")))
                            .build());
            FakeSandboxServer.event(stream, FakeSandboxServer.exited(0));
            FakeSandboxServer.endStream(stream, EndStream.ok());
        });
        FakeTerminal terminal = new FakeTerminal();

        int code = cli.run(
                new ByteArrayInputStream("exit\r".getBytes(StandardCharsets.UTF_8)), terminal, "exec", "-t", ID);

        assertThat(code).as(stderr()).isZero();
        assertThat(stdout()).isEqualTo("$ exit\r\n");
        StartRequest start = FakeSandboxServer.streamRequest(
                server.envdRequests("/process.Process/Start").getFirst(), StartRequest.getDefaultInstance());
        assertThat(start.getProcess().getArgsList()).containsExactly("-i", "-l");
        assertThat(start.getPty().getSize().getCols()).isEqualTo(120);
        assertThat(start.getPty().getSize().getRows()).isEqualTo(40);
        assertThat(start.getProcess().getEnvsMap())
                .containsEntry("TERM", "xterm-256color")
                .containsEntry("LANG", "C.UTF-8");
        assertThat(start.hasStdin()).isFalse();
        SendInputRequest input = FakeSandboxServer.unaryRequest(
                server.envdRequests("/process.Process/SendInput").getFirst(), SendInputRequest.getDefaultInstance());
        assertThat(input.getInput().getPty().toStringUtf8()).isEqualTo("exit\r");
        assertThat(server.envdRequests("/process.Process/CloseStdin")).isEmpty();
        assertThat(terminal.raw).hasValue(1);
        assertThat(terminal.restored).hasValue(1);
    }

    @Test
    void tty_needs_a_terminal_on_stdin() {
        assertThat(aenv(InputStream.nullInputStream(), false, "exec", "-t", ID)).isEqualTo(2);
        assertThat(stderr()).contains("--tty needs stdin to be a terminal");
    }

    @Test
    void exec_usage_errors_exit_2() {
        assertThat(aenv("exec", ID)).isEqualTo(2);
        assertThat(aenv("exec", ID, "-c", "ls", "--", "ls")).isEqualTo(2);
        assertThat(aenv("exec", ID, "--stdin", "--no-stdin", "--", "ls")).isEqualTo(2);
        assertThat(stderr()).contains("no command").contains("not both").contains("exclude each other");
        assertThat(server.envdRequests("/process.Process/Start")).isEmpty();
    }
}
