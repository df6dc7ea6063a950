package io.agentenv.envd.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.protobuf.ByteString;
import io.agentenv.envd.logs.LogJournal;
import io.agentenv.envd.protocol.connect.ConnectCode;
import io.agentenv.envd.protocol.connect.Envelope;
import io.agentenv.envd.protocol.connect.WireFormat;
import io.agentenv.envd.protocol.process.CloseStdinRequest;
import io.agentenv.envd.protocol.process.ConnectRequest;
import io.agentenv.envd.protocol.process.ConnectResponse;
import io.agentenv.envd.protocol.process.ListRequest;
import io.agentenv.envd.protocol.process.ListResponse;
import io.agentenv.envd.protocol.process.PTY;
import io.agentenv.envd.protocol.process.ProcessConfig;
import io.agentenv.envd.protocol.process.ProcessEvent;
import io.agentenv.envd.protocol.process.ProcessInput;
import io.agentenv.envd.protocol.process.ProcessSelector;
import io.agentenv.envd.protocol.process.SendInputRequest;
import io.agentenv.envd.protocol.process.SendSignalRequest;
import io.agentenv.envd.protocol.process.Signal;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.envd.protocol.process.StartResponse;
import io.agentenv.envd.protocol.process.StreamInputRequest;
import io.agentenv.envd.protocol.process.UpdateRequest;
import io.agentenv.envd.session.InitRequest;
import io.agentenv.envd.session.Session;
import io.agentenv.envd.testing.ConnectTestClient;
import io.agentenv.envd.testing.TestEnvd;
import io.agentenv.envd.users.Accounts;
import io.agentenv.envd.users.UserDirectory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ProcessServiceTest {
    private static final Map<String, String> NO_HEADERS = Map.of();

    @TempDir
    Path temp;

    private Session session;
    private ProcessService processes;
    private TestEnvd envd;
    private ConnectTestClient client;

    @BeforeEach
    void start_envd() throws Exception {
        Clock clock = Clock.systemUTC();
        session = new Session(clock);
        session.init(new InitRequest(
                Optional.empty(),
                Map.of("FROM_INIT", "init-value"),
                Optional.empty(),
                Optional.empty(),
                Optional.empty()));
        Accounts accounts = new Accounts(UserDirectory.system(), session::defaultUser, System.getProperty("user.name"));
        processes = ProcessService.create(
                accounts,
                session,
                new LogJournal(clock, 1 << 20),
                clock,
                Duration.ofMinutes(1),
                ProcessService.DEFAULT_PATH);
        processes.prepareInBackground();
        envd = TestEnvd.start(session, Optional.empty(), (rpcs, routes) -> processes.register(rpcs));
        client = envd.client();
    }

    @AfterEach
    void stop_envd() throws Exception {
        processes.close();
        envd.close();
    }

    private static StartRequest bash(String script) {
        return StartRequest.newBuilder()
                .setProcess(ProcessConfig.newBuilder().setCmd("/bin/bash").addAllArgs(List.of("-c", script)))
                .setStdin(false)
                .build();
    }

    private ConnectTestClient.Stream<StartResponse> start(StartRequest request, Map<String, String> headers)
            throws Exception {
        return client.stream(
                "process.Process/Start", request, StartResponse.getDefaultInstance(), WireFormat.JSON, headers);
    }

    private static String output(List<StartResponse> events, ProcessEvent.DataEvent.OutputCase which) {
        StringBuilder text = new StringBuilder();
        for (StartResponse e : events) {
            if (e.getEvent().hasData() && e.getEvent().getData().getOutputCase() == which) {
                ProcessEvent.DataEvent d = e.getEvent().getData();
                ByteString bytes = switch (which) {
                    case STDOUT -> d.getStdout();
                    case STDERR -> d.getStderr();
                    default -> d.getPty();
                };
                text.append(bytes.toStringUtf8());
            }
        }
        return text.toString();
    }

    private static ProcessEvent.EndEvent endOf(List<StartResponse> events) {
        return events.getLast().getEvent().getEnd();
    }

    @Test
    void start_sends_the_start_event_first_then_output_then_the_end_event() throws Exception {
        try (var stream = start(bash("echo out; echo err >&2; exit 3"), NO_HEADERS)) {
            assertThat(stream.status()).isEqualTo(200);
            assertThat(stream.contentType()).isEqualTo("application/connect+json");
            List<StartResponse> events = stream.rest();

            assertThat(events.getFirst().getEvent().getStart().getPid()).isPositive();
            assertThat(output(events, ProcessEvent.DataEvent.OutputCase.STDOUT)).isEqualTo("out\n");
            assertThat(output(events, ProcessEvent.DataEvent.OutputCase.STDERR)).isEqualTo("err\n");
            assertThat(endOf(events).getExitCode()).isEqualTo(3);
            assertThat(endOf(events).getExited()).isTrue();
            assertThat(endOf(events).getStatus()).isEqualTo("exit status 3");
            assertThat(endOf(events).getError()).isEqualTo("exit status 3");
            assertThat(stream.end().error()).isEmpty();
        }
    }

    @Test
    void a_successful_process_has_no_error_in_its_end_event() throws Exception {
        try (var stream = start(bash("true"), NO_HEADERS)) {
            ProcessEvent.EndEvent end = endOf(stream.rest());
            assertThat(end.getExitCode()).isZero();
            assertThat(end.hasError()).isFalse();
            assertThat(end.getStatus()).isEqualTo("exit status 0");
        }
    }

    @Test
    void output_written_just_before_exit_by_a_long_silent_process_is_delivered() throws Exception {
        try (var stream = start(bash("sleep 0.8; echo late"), NO_HEADERS)) {
            List<StartResponse> events = stream.rest();
            assertThat(output(events, ProcessEvent.DataEvent.OutputCase.STDOUT)).isEqualTo("late\n");
        }
    }

    @Test
    void a_background_child_holding_stdout_does_not_hold_back_the_end_event() throws Exception {
        // the 5 s deadline would end the stream with deadline_exceeded if the end event waited for the child
        try (var stream = start(bash("sleep 60 & echo $!"), Map.of("Connect-Timeout-Ms", "5000"))) {
            List<StartResponse> events = stream.rest();
            assertThat(stream.end().error()).isEmpty();
            assertThat(endOf(events).getExitCode()).isZero();
            long child = Long.parseLong(
                    output(events, ProcessEvent.DataEvent.OutputCase.STDOUT).strip());
            ProcessHandle.of(child).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void closing_the_service_kills_background_children_of_processes_that_already_exited() throws Exception {
        long child;
        try (var stream = start(bash("sleep 60 & echo $!"), NO_HEADERS)) {
            List<StartResponse> events = stream.rest();
            child = Long.parseLong(
                    output(events, ProcessEvent.DataEvent.OutputCase.STDOUT).strip());
        }
        assertThat(ProcessHandle.of(child).map(ProcessHandle::isAlive)).contains(true);

        processes.close();

        awaitGone(child);
    }

    @Test
    void the_binary_proto_variant_carries_the_same_events() throws Exception {
        try (var stream = client.stream(
                "process.Process/Start",
                bash("printf hi"),
                StartResponse.getDefaultInstance(),
                WireFormat.PROTO,
                NO_HEADERS)) {
            assertThat(stream.contentType()).isEqualTo("application/connect+proto");
            List<StartResponse> events = stream.rest();
            assertThat(output(events, ProcessEvent.DataEvent.OutputCase.STDOUT)).isEqualTo("hi");
            assertThat(endOf(events).getExitCode()).isZero();
        }
    }

    @Test
    void init_env_vars_and_per_call_envs_are_merged_over_home_user_and_path() throws Exception {
        StartRequest request = StartRequest.newBuilder()
                .setProcess(ProcessConfig.newBuilder()
                        .setCmd("/bin/bash")
                        .addAllArgs(List.of("-c", "echo $FROM_INIT $PER_CALL $HOME $USER; echo $PATH"))
                        .putEnvs("PER_CALL", "call"))
                .build();
        try (var stream = start(request, NO_HEADERS)) {
            String out = output(stream.rest(), ProcessEvent.DataEvent.OutputCase.STDOUT);
            String user = System.getProperty("user.name");
            assertThat(out)
                    .startsWith("init-value call ")
                    .contains(" " + user + "\n")
                    .contains("/usr/bin");
        }
    }

    @Test
    void a_missing_cwd_or_command_ends_the_stream_with_invalid_argument() throws Exception {
        StartRequest badCwd = StartRequest.newBuilder()
                .setProcess(ProcessConfig.newBuilder().setCmd("/bin/true").setCwd("/definitely/not/here"))
                .build();
        try (var stream = start(badCwd, NO_HEADERS)) {
            assertThat(stream.rest()).isEmpty();
            assertThat(stream.end().error().orElseThrow().code()).isEqualTo(ConnectCode.INVALID_ARGUMENT);
            assertThat(stream.end().error().orElseThrow().getMessage())
                    .isEqualTo("cwd '/definitely/not/here' does not exist");
        }
        StartRequest badCmd = StartRequest.newBuilder()
                .setProcess(ProcessConfig.newBuilder().setCmd("no-such-cmd-xyz"))
                .build();
        try (var stream = start(badCmd, NO_HEADERS)) {
            assertThat(stream.rest()).isEmpty();
            assertThat(stream.end().error().orElseThrow().getMessage()).contains("executable file not found in $PATH");
        }
    }

    @Test
    void a_relative_cwd_resolves_against_the_users_home_and_no_cwd_is_the_default_workdir() throws Exception {
        String name = System.getProperty("user.name");
        Path home = UserDirectory.system().find(name).orElseThrow().home();
        session.init(new InitRequest(
                Optional.empty(), Map.of(), Optional.empty(), Optional.of(temp.toString()), Optional.empty()));
        StartRequest relative = bash("pwd").toBuilder()
                .setProcess(bash("pwd").getProcess().toBuilder().setCwd("."))
                .build();

        try (var stream = start(relative, NO_HEADERS)) {
            assertThat(output(stream.rest(), ProcessEvent.DataEvent.OutputCase.STDOUT))
                    .isEqualTo(home + "\n");
        }
        try (var stream = start(bash("pwd"), NO_HEADERS)) {
            assertThat(output(stream.rest(), ProcessEvent.DataEvent.OutputCase.STDOUT))
                    .isEqualTo(temp + "\n");
        }
    }

    @Test
    void malformed_env_names_and_nul_bytes_are_invalid_arguments() throws Exception {
        for (StartRequest bad : List.of(
                StartRequest.newBuilder()
                        .setProcess(
                                ProcessConfig.newBuilder().setCmd("/bin/true").putEnvs("A=B", "x"))
                        .build(),
                StartRequest.newBuilder()
                        .setProcess(
                                ProcessConfig.newBuilder().setCmd("/bin/true").putEnvs("", "x"))
                        .build(),
                StartRequest.newBuilder()
                        .setProcess(
                                ProcessConfig.newBuilder().setCmd("/bin/true").addArgs("a\0b"))
                        .build())) {
            try (var stream = start(bad, NO_HEADERS)) {
                assertThat(stream.rest()).isEmpty();
                assertThat(stream.end().error().orElseThrow().code()).isEqualTo(ConnectCode.INVALID_ARGUMENT);
            }
        }
    }

    @Test
    void a_command_runs_as_the_requested_user_with_its_groups_and_home_in_its_own_session() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "switching users needs root");
        String expectedGroups = new String(
                        new ProcessBuilder("id", "-G", "nobody")
                                .start()
                                .getInputStream()
                                .readAllBytes(),
                        StandardCharsets.UTF_8)
                .strip();
        String basic =
                "Basic " + java.util.Base64.getEncoder().encodeToString("nobody:".getBytes(StandardCharsets.UTF_8));
        String script =
                "id -u; id -G; echo $HOME $USER; read -r _ _ _ _ pgrp sid _ < /proc/$$/stat; echo $pgrp $sid $$";
        for (boolean stdin : List.of(false, true)) { // without stdin natively spawned, with stdin through the JDK
            StartRequest request = bash(script).toBuilder().setStdin(stdin).build();
            try (var stream = start(request, Map.of("Authorization", basic))) {
                List<StartResponse> events = stream.rest();
                int pid = events.getFirst().getEvent().getStart().getPid();
                assertThat(output(events, ProcessEvent.DataEvent.OutputCase.STDOUT)
                                .lines()
                                .toList())
                        .as("stdin " + stdin)
                        .containsExactly("65534", expectedGroups, "/nonexistent nobody", pid + " " + pid + " " + pid);
                assertThat(endOf(events).getExitCode()).isZero();
            }
        }
    }

    @Test
    void an_unknown_user_is_unauthenticated() throws Exception {
        String basic = "Basic "
                + java.util.Base64.getEncoder().encodeToString("nobody-here-xyz:".getBytes(StandardCharsets.UTF_8));
        try (var stream = start(bash("true"), Map.of("Authorization", basic))) {
            assertThat(stream.rest()).isEmpty();
            assertThat(stream.end().error().orElseThrow().code()).isEqualTo(ConnectCode.UNAUTHENTICATED);
            assertThat(stream.end().error().orElseThrow().getMessage()).isEqualTo("invalid user: 'nobody-here-xyz'");
        }
    }

    @Test
    void the_connect_timeout_kills_the_process_and_ends_the_stream_with_deadline_exceeded() throws Exception {
        long pid;
        try (var stream = start(bash("sleep 30"), Map.of("Connect-Timeout-Ms", "300"))) {
            List<StartResponse> events = stream.rest();
            pid = events.getFirst().getEvent().getStart().getPid();
            assertThat(stream.end().error().orElseThrow().code()).isEqualTo(ConnectCode.DEADLINE_EXCEEDED);
        }
        awaitGone(pid);
    }

    @Test
    void a_quiet_stream_gets_keepalive_events_at_the_requested_interval() throws Exception {
        try (var stream = start(bash("sleep 1.6; echo done"), Map.of("Keepalive-Ping-Interval", "1"))) {
            List<StartResponse> events = stream.rest();
            assertThat(events)
                    .anySatisfy(e -> assertThat(e.getEvent().hasKeepalive()).isTrue());
            assertThat(output(events, ProcessEvent.DataEvent.OutputCase.STDOUT)).isEqualTo("done\n");
        }
    }

    @Test
    void a_process_survives_its_client_and_can_be_reattached_by_pid_and_by_tag() throws Exception {
        StartRequest request = StartRequest.newBuilder()
                .setProcess(ProcessConfig.newBuilder()
                        .setCmd("/bin/bash")
                        .addAllArgs(List.of("-c", "read line; echo got-$line")))
                .setTag("my-tag")
                .setStdin(true)
                .build();
        int pid;
        try (var stream = start(request, NO_HEADERS)) {
            pid = stream.next().orElseThrow().getEvent().getStart().getPid();
        } // the client disconnects here

        ListResponse list = client.unary("process.Process/List", ListRequest.getDefaultInstance(), NO_HEADERS)
                .message(ListResponse.getDefaultInstance());
        assertThat(list.getProcessesList()).anySatisfy(p -> {
            assertThat(p.getPid()).isEqualTo(pid);
            assertThat(p.getTag()).isEqualTo("my-tag");
            assertThat(p.getConfig().getCmd()).isEqualTo("/bin/bash");
            assertThat(p.getConfig().getArgsList()).containsExactly("-c", "read line; echo got-$line");
        });

        try (var byTag = client.stream(
                "process.Process/Connect",
                ConnectRequest.newBuilder()
                        .setProcess(ProcessSelector.newBuilder().setTag("my-tag"))
                        .build(),
                ConnectResponse.getDefaultInstance(),
                WireFormat.JSON,
                NO_HEADERS)) {
            assertThat(byTag.next().orElseThrow().getEvent().getStart().getPid())
                    .isEqualTo(pid);
            var sent = client.unary(
                    "process.Process/SendInput",
                    SendInputRequest.newBuilder()
                            .setProcess(ProcessSelector.newBuilder().setPid(pid))
                            .setInput(ProcessInput.newBuilder().setStdin(ByteString.copyFromUtf8("hello\n")))
                            .build(),
                    NO_HEADERS);
            assertThat(sent.status()).isEqualTo(200);
            assertThat(sent.text()).isEqualTo("{}");
            List<ConnectResponse> events = byTag.rest();
            assertThat(events)
                    .anySatisfy(
                            e -> assertThat(e.getEvent().getData().getStdout().toStringUtf8())
                                    .isEqualTo("got-hello\n"));
            assertThat(events.getLast().getEvent().getEnd().getExitCode()).isZero();
        }

        try (var late = client.stream(
                "process.Process/Connect",
                ConnectRequest.newBuilder()
                        .setProcess(ProcessSelector.newBuilder().setPid(pid))
                        .build(),
                ConnectResponse.getDefaultInstance(),
                WireFormat.JSON,
                NO_HEADERS)) {
            List<ConnectResponse> events = late.rest();
            assertThat(events).hasSize(2);
            assertThat(events.get(0).getEvent().getStart().getPid()).isEqualTo(pid);
            assertThat(events.get(1).getEvent().getEnd().getExitCode()).isZero();
        }
    }

    @Test
    void connect_or_signal_to_an_unknown_pid_is_not_found() throws Exception {
        try (var stream = client.stream(
                "process.Process/Connect",
                ConnectRequest.newBuilder()
                        .setProcess(ProcessSelector.newBuilder().setPid(999_999))
                        .build(),
                ConnectResponse.getDefaultInstance(),
                WireFormat.JSON,
                NO_HEADERS)) {
            assertThat(stream.rest()).isEmpty();
            assertThat(stream.end().error().orElseThrow().code()).isEqualTo(ConnectCode.NOT_FOUND);
        }
        var reply = client.unary(
                "process.Process/SendSignal",
                SendSignalRequest.newBuilder()
                        .setProcess(ProcessSelector.newBuilder().setPid(999_999))
                        .setSignal(Signal.SIGNAL_SIGKILL)
                        .build(),
                NO_HEADERS);
        assertThat(reply.status()).isEqualTo(404);
        assertThat(reply.contentType()).startsWith("application/json");
        assertThat(reply.text())
                .isEqualTo("{\"code\":\"not_found\",\"message\":\"process with pid 999999 not found\"}");
    }

    @Test
    void sigterm_and_sigkill_end_the_process_with_a_signal_status() throws Exception {
        for (Signal signal : List.of(Signal.SIGNAL_SIGTERM, Signal.SIGNAL_SIGKILL)) {
            try (var stream = start(bash("sleep 30"), NO_HEADERS)) {
                int pid = stream.next().orElseThrow().getEvent().getStart().getPid();
                var reply = client.unary(
                        "process.Process/SendSignal",
                        SendSignalRequest.newBuilder()
                                .setProcess(ProcessSelector.newBuilder().setPid(pid))
                                .setSignal(signal)
                                .build(),
                        NO_HEADERS);
                assertThat(reply.status()).isEqualTo(200);
                ProcessEvent.EndEvent end = endOf(stream.rest());
                assertThat(end.getExitCode()).isEqualTo(-1);
                assertThat(end.getExited()).isFalse();
                assertThat(end.getStatus())
                        .isEqualTo(signal == Signal.SIGNAL_SIGKILL ? "signal: killed" : "signal: terminated");
            }
        }
    }

    @Test
    void killing_a_process_kills_its_whole_process_group() throws Exception {
        try (var stream = start(bash("sleep 300 & echo $!; wait"), NO_HEADERS)) {
            int pid = stream.next().orElseThrow().getEvent().getStart().getPid();
            long child = Long.parseLong(stream.next()
                    .orElseThrow()
                    .getEvent()
                    .getData()
                    .getStdout()
                    .toStringUtf8()
                    .strip());
            client.unary(
                    "process.Process/SendSignal",
                    SendSignalRequest.newBuilder()
                            .setProcess(ProcessSelector.newBuilder().setPid(pid))
                            .setSignal(Signal.SIGNAL_SIGKILL)
                            .build(),
                    NO_HEADERS);
            stream.rest();
            awaitGone(child);
        }
    }

    @Test
    void stdin_is_fed_by_send_input_and_closed_by_close_stdin() throws Exception {
        StartRequest cat = StartRequest.newBuilder()
                .setProcess(ProcessConfig.newBuilder().setCmd("cat"))
                .setStdin(true)
                .build();
        try (var stream = start(cat, NO_HEADERS)) {
            int pid = stream.next().orElseThrow().getEvent().getStart().getPid();
            ProcessSelector self = ProcessSelector.newBuilder().setPid(pid).build();
            client.unary(
                    "process.Process/SendInput",
                    SendInputRequest.newBuilder()
                            .setProcess(self)
                            .setInput(ProcessInput.newBuilder().setStdin(ByteString.copyFromUtf8("abc\n")))
                            .build(),
                    NO_HEADERS);
            var closed = client.unary(
                    "process.Process/CloseStdin",
                    CloseStdinRequest.newBuilder().setProcess(self).build(),
                    NO_HEADERS);
            assertThat(closed.status()).isEqualTo(200);
            List<StartResponse> events = stream.rest();
            assertThat(output(events, ProcessEvent.DataEvent.OutputCase.STDOUT)).isEqualTo("abc\n");
            assertThat(endOf(events).getExitCode()).isZero();
        }
    }

    @Test
    void without_stdin_the_process_reads_end_of_file_and_send_input_is_refused() throws Exception {
        try (var stream = start(bash("cat; echo eof"), NO_HEADERS)) {
            int pid = stream.next().orElseThrow().getEvent().getStart().getPid();
            var reply = client.unary(
                    "process.Process/SendInput",
                    SendInputRequest.newBuilder()
                            .setProcess(ProcessSelector.newBuilder().setPid(pid))
                            .setInput(ProcessInput.newBuilder().setStdin(ByteString.copyFromUtf8("x")))
                            .build(),
                    NO_HEADERS);
            List<StartResponse> events = stream.rest();
            assertThat(output(events, ProcessEvent.DataEvent.OutputCase.STDOUT)).isEqualTo("eof\n");
            assertThat(reply.status()).isIn(400, 404);
        }
    }

    @Test
    void a_pty_process_streams_pty_data_takes_pty_input_and_can_be_resized() throws Exception {
        StartRequest request = StartRequest.newBuilder()
                .setProcess(ProcessConfig.newBuilder()
                        .setCmd("/bin/bash")
                        .addAllArgs(List.of("--norc", "-i"))
                        .putEnvs("PS1", "$ "))
                .setPty(PTY.newBuilder()
                        .setSize(PTY.Size.newBuilder().setCols(80).setRows(24)))
                .build();
        try (var stream = start(request, NO_HEADERS)) {
            int pid = stream.next().orElseThrow().getEvent().getStart().getPid();
            ProcessSelector self = ProcessSelector.newBuilder().setPid(pid).build();
            var resized = client.unary(
                    "process.Process/Update",
                    UpdateRequest.newBuilder()
                            .setProcess(self)
                            .setPty(PTY.newBuilder()
                                    .setSize(PTY.Size.newBuilder().setCols(100).setRows(30)))
                            .build(),
                    NO_HEADERS);
            assertThat(resized.status()).isEqualTo(200);
            client.unary(
                    "process.Process/SendInput",
                    SendInputRequest.newBuilder()
                            .setProcess(self)
                            .setInput(ProcessInput.newBuilder()
                                    .setPty(ByteString.copyFromUtf8("stty size; tty; exit 5\n")))
                            .build(),
                    NO_HEADERS);
            List<StartResponse> events = stream.rest();
            String screen = output(events, ProcessEvent.DataEvent.OutputCase.PTY);
            assertThat(screen).contains("30 100").containsPattern("/dev/pts/\\d+");
            assertThat(output(events, ProcessEvent.DataEvent.OutputCase.STDOUT)).isEmpty();
            assertThat(endOf(events).getExitCode()).isEqualTo(5);
        }
    }

    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void more_open_ptys_than_carrier_threads_all_echo_their_input() throws Exception {
        // a pty's reader blocks in a native read: as a virtual thread it would hold a carrier while the shell is idle
        int carriers = Integer.getInteger(
                "jdk.virtualThreadScheduler.parallelism", Runtime.getRuntime().availableProcessors());
        StartRequest shell = StartRequest.newBuilder()
                .setProcess(ProcessConfig.newBuilder()
                        .setCmd("/bin/bash")
                        .addAllArgs(List.of("--norc", "-i"))
                        .putEnvs("PS1", "$ "))
                .setPty(PTY.newBuilder()
                        .setSize(PTY.Size.newBuilder().setCols(80).setRows(24)))
                .build();
        List<ConnectTestClient.Stream<StartResponse>> shells = new java.util.ArrayList<>();
        try {
            for (int i = 0; i <= carriers; i++) {
                shells.add(start(shell, NO_HEADERS));
            }
            for (int i = 0; i < shells.size(); i++) {
                int pid =
                        shells.get(i).next().orElseThrow().getEvent().getStart().getPid();
                var sent = client.unary(
                        "process.Process/SendInput",
                        SendInputRequest.newBuilder()
                                .setProcess(ProcessSelector.newBuilder().setPid(pid))
                                .setInput(ProcessInput.newBuilder()
                                        .setPty(ByteString.copyFromUtf8("echo shell-$((" + i + "+100)); exit\n")))
                                .build(),
                        NO_HEADERS);
                assertThat(sent.status()).isEqualTo(200);
            }
            for (int i = 0; i < shells.size(); i++) {
                List<StartResponse> events = shells.get(i).rest();
                assertThat(output(events, ProcessEvent.DataEvent.OutputCase.PTY))
                        .contains("shell-" + (i + 100));
                assertThat(endOf(events).getExitCode()).isZero();
            }
        } finally {
            for (var s : shells) {
                s.close();
            }
        }
    }

    @Test
    void resizing_a_process_without_a_pty_is_a_failed_precondition() throws Exception {
        try (var stream = start(bash("sleep 30"), NO_HEADERS)) {
            int pid = stream.next().orElseThrow().getEvent().getStart().getPid();
            var reply = client.unary(
                    "process.Process/Update",
                    UpdateRequest.newBuilder()
                            .setProcess(ProcessSelector.newBuilder().setPid(pid))
                            .setPty(PTY.newBuilder()
                                    .setSize(PTY.Size.newBuilder().setCols(10).setRows(10)))
                            .build(),
                    NO_HEADERS);
            assertThat(reply.status()).isEqualTo(400);
            assertThat(reply.text()).contains("\"code\":\"failed_precondition\"");
            client.unary(
                    "process.Process/SendSignal",
                    SendSignalRequest.newBuilder()
                            .setProcess(ProcessSelector.newBuilder().setPid(pid))
                            .setSignal(Signal.SIGNAL_SIGKILL)
                            .build(),
                    NO_HEADERS);
        }
    }

    @Test
    void stream_input_feeds_stdin_in_order_through_a_client_stream() throws Exception {
        StartRequest cat = StartRequest.newBuilder()
                .setProcess(ProcessConfig.newBuilder().setCmd("cat"))
                .setStdin(true)
                .build();
        try (var stream = start(cat, NO_HEADERS)) {
            int pid = stream.next().orElseThrow().getEvent().getStart().getPid();
            ProcessSelector self = ProcessSelector.newBuilder().setPid(pid).build();
            List<Envelope> reply = client.clientStream(
                    "process.Process/StreamInput",
                    List.of(
                            StreamInputRequest.newBuilder()
                                    .setStart(StreamInputRequest.StartEvent.newBuilder()
                                            .setProcess(self))
                                    .build(),
                            data("one "),
                            StreamInputRequest.newBuilder()
                                    .setKeepalive(StreamInputRequest.KeepAlive.getDefaultInstance())
                                    .build(),
                            data("two\n")));
            assertThat(reply).hasSize(2);
            assertThat(new String(reply.get(0).payload(), StandardCharsets.UTF_8))
                    .isEqualTo("{}");
            assertThat(reply.get(1).isEndStream()).isTrue();
            client.unary(
                    "process.Process/CloseStdin",
                    CloseStdinRequest.newBuilder().setProcess(self).build(),
                    NO_HEADERS);
            assertThat(output(stream.rest(), ProcessEvent.DataEvent.OutputCase.STDOUT))
                    .isEqualTo("one two\n");
        }
    }

    private static StreamInputRequest data(String text) {
        return StreamInputRequest.newBuilder()
                .setData(StreamInputRequest.DataEvent.newBuilder()
                        .setInput(ProcessInput.newBuilder().setStdin(ByteString.copyFromUtf8(text))))
                .build();
    }

    private static void awaitGone(long pid) throws Exception {
        Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        if (handle.isPresent()) {
            handle.get().onExit().get(5, TimeUnit.SECONDS);
        }
    }
}
