package io.agentenv.sdk.commands;

import com.google.protobuf.ByteString;
import io.agentenv.envd.protocol.process.ConnectRequest;
import io.agentenv.envd.protocol.process.PTY;
import io.agentenv.envd.protocol.process.ProcessConfig;
import io.agentenv.envd.protocol.process.ProcessInput;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.envd.protocol.process.UpdateRequest;
import io.agentenv.envd.protocol.process.UpdateResponse;
import io.agentenv.sdk.internal.ServerStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Pseudo-terminal sessions in a sandbox: an interactive shell whose output arrives as raw terminal bytes. Obtain it
 * from {@code sandbox.pty()}.
 */
public final class Pty {
    private final Commands commands;

    /** Over a sandbox's commands (internal: use {@code sandbox.pty()}). */
    public Pty(Commands commands) {
        this.commands = Objects.requireNonNull(commands, "commands");
    }

    /** Starts {@code bash -i -l} on a terminal of the given size; output reaches {@code onData} on a reader thread. */
    public CommandHandle create(PtyOptions options) {
        Map<String, String> envs = new LinkedHashMap<>(options.envs());
        envs.putIfAbsent("TERM", "xterm-256color");
        envs.putIfAbsent("LANG", "C.UTF-8");
        envs.putIfAbsent("LC_ALL", "C.UTF-8");
        ProcessConfig.Builder process = ProcessConfig.newBuilder()
                .setCmd("/bin/bash")
                .addArgs("-i")
                .addArgs("-l")
                .putAllEnvs(envs);
        options.cwd().ifPresent(process::setCwd);
        StartRequest request = StartRequest.newBuilder()
                .setProcess(process)
                .setPty(pty(options.size()))
                .build();
        ServerStream stream =
                commands.envd().stream(Commands.SERVICE + "Start", request, options.user(), options.timeout(), false);
        CommandHandle handle = commands.attach(stream, Optional.empty(), Optional.empty(), options.onData());
        commands.envd().config().streamExecutor().execute(handle::pump);
        return handle;
    }

    /** Attaches to a running terminal session; its output from now on reaches {@code onData}. */
    public CommandHandle connect(int pid, Consumer<byte[]> onData, Duration timeout) {
        ServerStream stream = commands.envd().stream(
                Commands.SERVICE + "Connect",
                ConnectRequest.newBuilder().setProcess(Commands.selector(pid)).build(),
                Optional.empty(),
                timeout,
                false);
        CommandHandle handle = commands.attach(stream, Optional.empty(), Optional.empty(), Optional.of(onData));
        commands.envd().config().streamExecutor().execute(handle::pump);
        return handle;
    }

    /** Types {@code data} into the terminal of process {@code pid}. */
    public void sendInput(int pid, byte[] data) {
        commands.sendInput(
                pid, ProcessInput.newBuilder().setPty(ByteString.copyFrom(data)).build());
    }

    /** Resizes the terminal of process {@code pid}. */
    public void resize(int pid, PtySize size) {
        commands.envd()
                .unary(
                        Commands.SERVICE + "Update",
                        UpdateRequest.newBuilder()
                                .setProcess(Commands.selector(pid))
                                .setPty(pty(size))
                                .build(),
                        UpdateResponse.parser(),
                        Optional.empty(),
                        false);
    }

    /** Kills the terminal's process; false when envd does not know it. */
    public boolean kill(int pid) {
        return commands.kill(pid);
    }

    private static PTY pty(PtySize size) {
        return PTY.newBuilder()
                .setSize(PTY.Size.newBuilder().setCols(size.cols()).setRows(size.rows()))
                .build();
    }
}
