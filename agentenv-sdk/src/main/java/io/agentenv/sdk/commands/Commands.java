package io.agentenv.sdk.commands;

import com.google.protobuf.ByteString;
import io.agentenv.envd.protocol.process.CloseStdinRequest;
import io.agentenv.envd.protocol.process.CloseStdinResponse;
import io.agentenv.envd.protocol.process.ConnectRequest;
import io.agentenv.envd.protocol.process.ListRequest;
import io.agentenv.envd.protocol.process.ListResponse;
import io.agentenv.envd.protocol.process.ProcessConfig;
import io.agentenv.envd.protocol.process.ProcessInput;
import io.agentenv.envd.protocol.process.ProcessSelector;
import io.agentenv.envd.protocol.process.SendInputRequest;
import io.agentenv.envd.protocol.process.SendInputResponse;
import io.agentenv.envd.protocol.process.SendSignalRequest;
import io.agentenv.envd.protocol.process.SendSignalResponse;
import io.agentenv.envd.protocol.process.Signal;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.sdk.InvalidArgumentException;
import io.agentenv.sdk.NotFoundException;
import io.agentenv.sdk.internal.EnvdClient;
import io.agentenv.sdk.internal.ServerStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Commands in a sandbox, through envd's process service. Each command runs as {@code /bin/bash -l -c <cmd>} (a login
 * shell, so the user's profile applies), like E2B's SDKs run it. Obtain it from {@code sandbox.commands()}.
 */
public final class Commands {
    static final String SERVICE = "process.Process/";
    private final EnvdClient envd;
    private final CommandHandle.ProcessControl control = new CommandHandle.ProcessControl() {
        @Override
        public boolean kill(int pid) {
            return Commands.this.kill(pid);
        }

        @Override
        public void sendStdin(int pid, byte[] data) {
            sendInput(
                    pid,
                    ProcessInput.newBuilder()
                            .setStdin(ByteString.copyFrom(data))
                            .build());
        }

        @Override
        public void closeStdin(int pid) {
            Commands.this.closeStdin(pid);
        }
    };

    /** For a sandbox's envd (internal: use {@code sandbox.commands()}). */
    public Commands(EnvdClient envd) {
        this.envd = Objects.requireNonNull(envd, "envd");
    }

    /** Runs {@code cmd} with the defaults and waits for it; throws {@link CommandExitException} on a non-zero exit. */
    public CommandResult run(String cmd) {
        return run(cmd, RunOptions.defaults());
    }

    /**
     * Runs {@code cmd} in the foreground: output reaches the callbacks as it arrives, on the calling thread; returns
     * the result once it ends. Throws {@link CommandExitException} on a non-zero exit code and
     * {@link io.agentenv.sdk.TimeoutException} when its timeout passed (envd killed it).
     */
    public CommandResult run(String cmd, RunOptions options) {
        CommandHandle handle = open(cmd, options);
        handle.pump();
        return handle.waitFor();
    }

    /** {@link #run(String, RunOptions)} on the sandbox's stream executor. */
    public CompletableFuture<CommandResult> runAsync(String cmd, RunOptions options) {
        return CompletableFuture.supplyAsync(
                () -> run(cmd, options), envd.config().streamExecutor());
    }

    /** {@link #run(String)} on the sandbox's stream executor. */
    public CompletableFuture<CommandResult> runAsync(String cmd) {
        return runAsync(cmd, RunOptions.defaults());
    }

    /**
     * Starts {@code cmd} in the background: returns once envd started it (with its pid); output reaches the callbacks on
     * a reader thread. Wait for it with {@link CommandHandle#waitFor()}.
     */
    public CommandHandle start(String cmd, RunOptions options) {
        CommandHandle handle = open(cmd, options);
        envd.config().streamExecutor().execute(handle::pump);
        return handle;
    }

    /** {@link #start(String, RunOptions)} with the defaults. */
    public CommandHandle start(String cmd) {
        return start(cmd, RunOptions.defaults());
    }

    private CommandHandle open(String cmd, RunOptions options) {
        Objects.requireNonNull(cmd, "cmd");
        ProcessConfig.Builder process = ProcessConfig.newBuilder()
                .setCmd("/bin/bash")
                .addArgs("-l")
                .addArgs("-c")
                .addArgs(cmd)
                .putAllEnvs(options.envs());
        options.cwd().ifPresent(process::setCwd);
        StartRequest.Builder request =
                StartRequest.newBuilder().setProcess(process).setStdin(options.stdin());
        options.tag().ifPresent(request::setTag);
        ServerStream stream = envd.stream(SERVICE + "Start", request.build(), options.user(), options.timeout(), false);
        return attach(stream, options.onStdout(), options.onStderr(), Optional.empty());
    }

    /**
     * Attaches to a running process started earlier (from this or another client): its output from now on reaches
     * {@code options}' callbacks (only {@code onStdout}, {@code onStderr} and {@code timeout} apply; the timeout ends
     * the attachment, not the process).
     */
    public CommandHandle connect(int pid, RunOptions options) {
        ServerStream stream = envd.stream(
                SERVICE + "Connect",
                ConnectRequest.newBuilder().setProcess(selector(pid)).build(),
                Optional.empty(),
                options.timeout(),
                false);
        CommandHandle handle = attach(stream, options.onStdout(), options.onStderr(), Optional.empty());
        envd.config().streamExecutor().execute(handle::pump);
        return handle;
    }

    /** {@link #connect(int, RunOptions)} without callbacks and with the default timeout. */
    public CommandHandle connect(int pid) {
        return connect(pid, RunOptions.defaults());
    }

    CommandHandle attach(
            ServerStream stream,
            Optional<Consumer<String>> onStdout,
            Optional<Consumer<String>> onStderr,
            Optional<Consumer<byte[]>> onPty) {
        try {
            int pid = CommandHandle.readStart(stream);
            return new CommandHandle(pid, stream, control, onStdout, onStderr, onPty);
        } catch (RuntimeException e) {
            stream.close();
            throw e;
        }
    }

    /** The processes envd runs (commands and terminals). */
    public List<ProcessInfo> list() {
        ListResponse response = envd.unary(
                SERVICE + "List", ListRequest.getDefaultInstance(), ListResponse.parser(), Optional.empty(), false);
        List<ProcessInfo> out = new ArrayList<>();
        for (io.agentenv.envd.protocol.process.ProcessInfo p : response.getProcessesList()) {
            ProcessConfig c = p.getConfig();
            out.add(new ProcessInfo(
                    p.getPid(),
                    p.hasTag() ? Optional.of(p.getTag()) : Optional.empty(),
                    c.getCmd(),
                    c.getArgsList(),
                    c.getEnvsMap(),
                    c.hasCwd() ? Optional.of(c.getCwd()) : Optional.empty()));
        }
        return out;
    }

    /** Sends SIGKILL to process {@code pid}; false when envd does not know it. */
    public boolean kill(int pid) {
        try {
            envd.unary(
                    SERVICE + "SendSignal",
                    SendSignalRequest.newBuilder()
                            .setProcess(selector(pid))
                            .setSignal(Signal.SIGNAL_SIGKILL)
                            .build(),
                    SendSignalResponse.parser(),
                    Optional.empty(),
                    false);
            return true;
        } catch (NotFoundException e) {
            return false;
        }
    }

    /** Writes {@code data} (UTF-8) to the stdin of process {@code pid}. */
    public void sendStdin(int pid, String data) {
        sendInput(
                pid,
                ProcessInput.newBuilder()
                        .setStdin(ByteString.copyFrom(data, StandardCharsets.UTF_8))
                        .build());
    }

    /** Writes bytes to the stdin of process {@code pid}. */
    public void sendStdin(int pid, byte[] data) {
        sendInput(
                pid,
                ProcessInput.newBuilder().setStdin(ByteString.copyFrom(data)).build());
    }

    /** Closes the stdin of process {@code pid}. */
    public void closeStdin(int pid) {
        envd.unary(
                SERVICE + "CloseStdin",
                CloseStdinRequest.newBuilder().setProcess(selector(pid)).build(),
                CloseStdinResponse.parser(),
                Optional.empty(),
                false);
    }

    void sendInput(int pid, ProcessInput input) {
        envd.unary(
                SERVICE + "SendInput",
                SendInputRequest.newBuilder()
                        .setProcess(selector(pid))
                        .setInput(input)
                        .build(),
                SendInputResponse.parser(),
                Optional.empty(),
                false);
    }

    static ProcessSelector selector(int pid) {
        if (pid <= 0) {
            throw new InvalidArgumentException("pid must be positive: " + pid);
        }
        return ProcessSelector.newBuilder().setPid(pid).build();
    }

    EnvdClient envd() {
        return envd;
    }
}
