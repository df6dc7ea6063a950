package io.agentenv.cli;

import static io.agentenv.cli.FakeSandboxServer.ID;
import static io.agentenv.cli.FakeSandboxServer.TOKEN;
import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.envd.protocol.connect.EndStream;
import io.agentenv.envd.protocol.process.CloseStdinResponse;
import io.agentenv.envd.protocol.process.SendInputRequest;
import io.agentenv.envd.protocol.process.SendInputResponse;
import io.agentenv.envd.protocol.process.StartRequest;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** aenv start: create, a shell (a pty on a terminal, bash reading stdin otherwise), then kill unless --keep. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class StartCommandTest {
    private static final String SANDBOX = """
            {"templateID":"py","sandboxID":"%s","clientID":"","envdVersion":"0.6.13","envdAccessToken":"%s",
             "trafficAccessToken":null,"domain":null}""".formatted(ID, TOKEN);

    private CliFixture cli;
    private FakeSandboxServer server;
    private final CountDownLatch inputDone = new CountDownLatch(1);

    @BeforeEach
    void start() throws IOException {
        cli = new CliFixture();
        server = cli.server();
        server.api("POST /v2/sandboxes", 201, SANDBOX);
        server.api("DELETE /sandboxes/" + ID, 204, "");
        server.envd("/process.Process/SendInput", (request, ex) -> {
            inputDone.countDown();
            FakeSandboxServer.unary(ex, SendInputResponse.getDefaultInstance());
        });
        server.envd("/process.Process/CloseStdin", (request, ex) -> {
            inputDone.countDown();
            FakeSandboxServer.unary(ex, CloseStdinResponse.getDefaultInstance());
        });
        server.envd("/process.Process/Start", (request, ex) -> {
            OutputStream stream = FakeSandboxServer.openStream(ex);
            FakeSandboxServer.event(stream, FakeSandboxServer.start(7));
            try {
                assertThat(inputDone.await(10, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            FakeSandboxServer.event(stream, FakeSandboxServer.stdout("Linux\n"));
            FakeSandboxServer.event(stream, FakeSandboxServer.exited(3));
            FakeSandboxServer.endStream(stream, EndStream.ok());
        });
    }

    @AfterEach
    void stop() {
        cli.close();
    }

    @Test
    void without_a_terminal_bash_runs_the_piped_script_and_the_sandbox_is_killed_after_it() throws IOException {
        InputStream script = new ByteArrayInputStream("uname\nexit 3\n".getBytes(StandardCharsets.UTF_8));

        int code = cli.run(script, false, "start", "py", "--timeout", "60", "--env", "A=B");

        assertThat(code).as(cli.stderr()).isEqualTo(3);
        assertThat(cli.stdout()).isEqualTo("Linux\n");
        FakeSandboxServer.Request create = server.requests.stream()
                .filter(r -> r.method().equals("POST") && r.uri().equals("/v2/sandboxes"))
                .findFirst()
                .orElseThrow();
        assertThat(create.text())
                .contains("\"templateID\":\"py\"")
                .contains("\"timeout\":60")
                .contains("\"envVars\":{\"A\":\"B\"}");
        StartRequest start = FakeSandboxServer.streamRequest(
                server.envdRequests("/process.Process/Start").getFirst(), StartRequest.getDefaultInstance());
        assertThat(start.getProcess().getCmd()).isEqualTo("/bin/bash");
        assertThat(start.getProcess().getArgsList()).containsExactly("-l", "-c", "exec bash -s");
        assertThat(start.getStdin()).isTrue();
        assertThat(start.hasPty()).isFalse();
        SendInputRequest input = FakeSandboxServer.unaryRequest(
                server.envdRequests("/process.Process/SendInput").getFirst(), SendInputRequest.getDefaultInstance());
        assertThat(input.getInput().getStdin().toStringUtf8()).isEqualTo("uname\nexit 3\n");
        assertThat(server.requests.getLast().method() + " "
                        + server.requests.getLast().uri())
                .isEqualTo("DELETE /sandboxes/" + ID);
        assertThat(cli.stderr())
                .isEqualTo("aenv: sandbox " + ID + " (killed when the shell ends; --keep keeps it)\n"
                        + "aenv: killed sandbox " + ID + "\n");
    }

    @Test
    void on_a_terminal_it_is_a_login_shell_on_a_pty_and_keep_leaves_the_sandbox_running() throws IOException {
        Terminal terminal = new Terminal() {
            @Override
            public Optional<Size> size() {
                return Optional.of(new Size(100, 30));
            }

            @Override
            public Runnable enterRawMode() {
                return () -> {};
            }
        };

        int code = cli.run(
                new ByteArrayInputStream("exit 3\r".getBytes(StandardCharsets.UTF_8)),
                terminal,
                "start",
                "--keep",
                "--volume",
                "data:/data:ro");

        assertThat(code).as(cli.stderr()).isEqualTo(3);
        StartRequest start = FakeSandboxServer.streamRequest(
                server.envdRequests("/process.Process/Start").getFirst(), StartRequest.getDefaultInstance());
        assertThat(start.getProcess().getArgsList()).containsExactly("-i", "-l");
        assertThat(start.getPty().getSize().getCols()).isEqualTo(100);
        assertThat(server.requests).noneMatch(r -> r.method().equals("DELETE"));
        FakeSandboxServer.Request create = server.requests.stream()
                .filter(r -> r.method().equals("POST") && r.uri().equals("/v2/sandboxes"))
                .findFirst()
                .orElseThrow();
        assertThat(create.text())
                .contains("\"templateID\":\"base\"")
                .contains("\"volumeMounts\":[{\"name\":\"data\",\"path\":\"/data\",\"readOnly\":true}]");
        assertThat(cli.stderr()).isEqualTo("aenv: sandbox " + ID + " (kept when the shell ends)\n");
    }

    @Test
    void ctrl_c_kills_the_sandbox_once() {
        server.envd("/process.Process/Start", (request, ex) -> {
            OutputStream stream = FakeSandboxServer.openStream(ex);
            FakeSandboxServer.event(stream, FakeSandboxServer.start(7));
            FakeSandboxServer.event(stream, FakeSandboxServer.exited(130));
            FakeSandboxServer.endStream(stream, EndStream.ok());
        });
        assertThat(cli.run(InputStream.nullInputStream(), false, "start")).isEqualTo(130);
        cli.interruptHook().run(); // as the JVM's shutdown hook would, after the shell ended: nothing more to do

        assertThat(server.requests.stream()
                        .filter(r -> r.method().equals("DELETE"))
                        .count())
                .isEqualTo(1);
    }
}
