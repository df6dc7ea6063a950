package io.agentenv.cli;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.ByteString;
import io.agentenv.envd.client.EnvdClient;
import io.agentenv.envd.protocol.connect.ConnectCode;
import io.agentenv.envd.protocol.connect.RpcException;
import io.agentenv.envd.protocol.process.CloseStdinRequest;
import io.agentenv.envd.protocol.process.CloseStdinResponse;
import io.agentenv.envd.protocol.process.ProcessEvent;
import io.agentenv.envd.protocol.process.ProcessInput;
import io.agentenv.envd.protocol.process.ProcessSelector;
import io.agentenv.envd.protocol.process.SendInputRequest;
import io.agentenv.envd.protocol.process.SendInputResponse;
import io.agentenv.envd.protocol.process.SendSignalRequest;
import io.agentenv.envd.protocol.process.SendSignalResponse;
import io.agentenv.envd.protocol.process.Signal;
import io.agentenv.envd.protocol.process.StartRequest;
import io.agentenv.envd.protocol.process.StartResponse;
import io.agentenv.spi.EnvdException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One command run in a sandbox: {@code process.Process/Start}, its output copied to the local stdout and stderr as it
 * arrives, the local stdin (if given) sent with {@code SendInput} once the pid is known and closed with
 * {@code CloseStdin} at its end, and the exit status turned into a shell-style exit code.
 */
final class RemoteCommand {
    /** Exit code when {@code --timeout} ended the command, as GNU timeout(1) does. */
    static final int TIMED_OUT = 124;
    /** Exit code when the local stdout or stderr was closed (e.g. {@code | head}): a death by SIGPIPE. */
    static final int OUTPUT_CLOSED = 128 + 13;

    private static final int STDIN_CHUNK = 32 * 1024;
    private static final Duration INTERRUPT_WAIT = Duration.ofSeconds(5);
    /** Go's {@code syscall.Signal.String()} names, as envd's end event status reports them ({@code "signal: killed"}). */
    private static final Map<String, Integer> SIGNALS = Map.ofEntries(
            Map.entry("hangup", 1),
            Map.entry("interrupt", 2),
            Map.entry("quit", 3),
            Map.entry("illegal instruction", 4),
            Map.entry("trace/breakpoint trap", 5),
            Map.entry("aborted", 6),
            Map.entry("bus error", 7),
            Map.entry("floating point exception", 8),
            Map.entry("killed", 9),
            Map.entry("user defined signal 1", 10),
            Map.entry("segmentation fault", 11),
            Map.entry("user defined signal 2", 12),
            Map.entry("broken pipe", 13),
            Map.entry("alarm clock", 14),
            Map.entry("terminated", 15));

    /** STARTING until envd reports the pid, RUNNING until the stream ends, then DONE (also after a failure). */
    enum Phase {
        STARTING,
        RUNNING,
        DONE
    }

    private final EnvdClient envd;
    private final OutputStream stdout;
    private final OutputStream stderr;
    private final PrintWriter messages;
    private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.STARTING);
    /** Open while STARTING: an interrupt then waits (bounded) for the pid rather than leave the command running. */
    private final CountDownLatch leftStarting = new CountDownLatch(1);

    private volatile int pid;
    private volatile ProcessEvent.EndEvent end;

    RemoteCommand(EnvdClient envd, OutputStream stdout, OutputStream stderr, PrintWriter messages) {
        this.envd = requireNonNull(envd, "envd is null");
        this.stdout = requireNonNull(stdout, "stdout is null");
        this.stderr = requireNonNull(stderr, "stderr is null");
        this.messages = requireNonNull(messages, "messages is null");
    }

    /** Runs the command to its end; returns its exit code (128+N for a death by signal N, 124 on timeout). */
    int run(StartRequest start, Optional<Duration> timeout, Optional<String> user, Optional<InputStream> stdin)
            throws EnvdException {
        try {
            envd.serverStream(
                    "process.Process/Start",
                    start,
                    StartResponse.getDefaultInstance(),
                    timeout,
                    user,
                    response -> onEvent(response.getEvent(), user, stdin, start.hasPty()));
        } catch (OutputClosed e) {
            // as a pipeline would: the writer goes too (best effort; the command may have ended meanwhile)
            try {
                interrupt();
            } catch (EnvdException | RuntimeException ignored) {
                // nothing more to do: the exit code says what happened
            }
            return OUTPUT_CLOSED;
        } catch (RpcException e) {
            if (e.code() == ConnectCode.DEADLINE_EXCEEDED) {
                messages.println("aenv: the command timed out after "
                        + timeout.map(Duration::toSeconds).orElse(0L) + " s");
                messages.flush();
                return TIMED_OUT;
            }
            throw e;
        } finally {
            phase.set(Phase.DONE);
            leftStarting.countDown();
        }
        ProcessEvent.EndEvent result = end;
        if (result == null) {
            throw new RpcException(ConnectCode.UNKNOWN, "the command's stream ended without its exit status");
        }
        return exitCode(result);
    }

    /**
     * Ctrl-C (and a closed local output): sends SIGTERM to the command's process group (envd signals the group) while
     * it runs. Returns whether a signal was sent. Before envd has reported the pid it waits for it (at most 5 s), so
     * that a command interrupted while starting does not keep running. envd's signal set is SIGTERM and SIGKILL only,
     * so SIGINT itself cannot be forwarded.
     */
    boolean interrupt() throws EnvdException {
        try {
            if (!leftStarting.await(INTERRUPT_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                return false;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        if (phase.get() != Phase.RUNNING) {
            return false;
        }
        envd.unary(
                "process.Process/SendSignal",
                SendSignalRequest.newBuilder()
                        .setProcess(selector())
                        .setSignal(Signal.SIGNAL_SIGTERM)
                        .build(),
                SendSignalResponse.getDefaultInstance(),
                Optional.empty());
        return true;
    }

    private void onEvent(ProcessEvent event, Optional<String> user, Optional<InputStream> stdin, boolean pty) {
        switch (event.getEventCase()) {
            case START -> {
                pid = event.getStart().getPid();
                if (phase.compareAndSet(Phase.STARTING, Phase.RUNNING)) {
                    leftStarting.countDown();
                    stdin.ifPresent(in -> pumpStdin(in, user, pty));
                }
            }
            case DATA -> {
                ProcessEvent.DataEvent data = event.getData();
                switch (data.getOutputCase()) {
                    case STDOUT -> write(stdout, data.getStdout());
                    case STDERR -> write(stderr, data.getStderr());
                    case PTY -> write(stdout, data.getPty());
                    case OUTPUT_NOT_SET -> {}
                }
            }
            case END -> end = event.getEnd();
            case KEEPALIVE, EVENT_NOT_SET -> {}
        }
    }

    private static void write(OutputStream out, ByteString bytes) {
        try {
            bytes.writeTo(out);
            out.flush();
        } catch (IOException e) {
            throw new OutputClosed();
        }
    }

    /** The local stdout or stderr cannot be written any more. */
    private static final class OutputClosed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        OutputClosed() {
            super("local output closed", null, false, false);
        }
    }

    /**
     * Copies the local stdin to the command (its stdin, or its pseudo-terminal) in order on one daemon thread (a blocked read of a terminal must not keep
     * the JVM alive once the command has ended). Failures after the command ended are expected and ignored.
     */
    private void pumpStdin(InputStream in, Optional<String> user, boolean pty) {
        Thread.ofPlatform().daemon().name("aenv-stdin").start(() -> {
            byte[] buffer = new byte[STDIN_CHUNK];
            try {
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                    if (n > 0) {
                        ByteString bytes = ByteString.copyFrom(buffer, 0, n);
                        ProcessInput input = pty
                                ? ProcessInput.newBuilder().setPty(bytes).build()
                                : ProcessInput.newBuilder().setStdin(bytes).build();
                        envd.unary(
                                "process.Process/SendInput",
                                SendInputRequest.newBuilder()
                                        .setProcess(selector())
                                        .setInput(input)
                                        .build(),
                                SendInputResponse.getDefaultInstance(),
                                user);
                    }
                }
                if (!pty) { // a terminal has no end of input: Ctrl-D is a byte like any other
                    envd.unary(
                            "process.Process/CloseStdin",
                            CloseStdinRequest.newBuilder()
                                    .setProcess(selector())
                                    .build(),
                            CloseStdinResponse.getDefaultInstance(),
                            user);
                }
            } catch (IOException | EnvdException | RuntimeException e) {
                if (phase.get() == Phase.RUNNING) {
                    messages.println("aenv: stdin not forwarded: " + Printable.of(ApiException.describe(e)));
                    messages.flush();
                }
            }
        });
    }

    private ProcessSelector selector() {
        return ProcessSelector.newBuilder().setPid(pid).build();
    }

    /** The shell's convention: the exit status, or 128+N for a death by signal N; 255 when neither is known. */
    static int exitCode(ProcessEvent.EndEvent end) {
        if (end.getExited()) {
            return end.getExitCode() >= 0 && end.getExitCode() <= 255 ? end.getExitCode() : 255;
        }
        String status = end.getStatus();
        if (status.startsWith("signal: ")) {
            String name = status.substring("signal: ".length()).replace(" (core dumped)", "");
            Integer signal = SIGNALS.get(name);
            if (signal != null) {
                return 128 + signal;
            }
        }
        return 255;
    }
}
