package io.agentenv.sdk.commands;

import com.google.protobuf.InvalidProtocolBufferException;
import io.agentenv.envd.protocol.process.ProcessEvent;
import io.agentenv.envd.protocol.process.StartResponse;
import io.agentenv.sdk.SandboxException;
import io.agentenv.sdk.internal.ServerStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;

/**
 * A running command or terminal session: its pid, its output so far, and its end. Output reaches the callbacks given
 * at start as it arrives (on a reader thread for background commands). {@link #disconnect()} (or {@link #close()})
 * stops receiving without ending the process; {@link #kill()} ends it. Thread-safe.
 */
public final class CommandHandle implements AutoCloseable {
    private final int pid;
    private final ServerStream stream;
    private final ProcessControl control;
    private final Optional<Consumer<String>> onStdout;
    private final Optional<Consumer<String>> onStderr;
    private final Optional<Consumer<byte[]>> onPty;
    private final Utf8Decoder stdoutDecoder = new Utf8Decoder();
    private final Utf8Decoder stderrDecoder = new Utf8Decoder();

    @SuppressWarnings("JdkObsolete") // appended on the stream's thread, read on the caller's: synchronized on purpose
    private final StringBuffer stdout = new StringBuffer();

    @SuppressWarnings("JdkObsolete") // as stdout
    private final StringBuffer stderr = new StringBuffer();

    private final CompletableFuture<CommandResult> end = new CompletableFuture<>();

    /** What a handle needs to act on its process. */
    interface ProcessControl {
        boolean kill(int pid);

        void sendStdin(int pid, byte[] data);

        void closeStdin(int pid);
    }

    CommandHandle(
            int pid,
            ServerStream stream,
            ProcessControl control,
            Optional<Consumer<String>> onStdout,
            Optional<Consumer<String>> onStderr,
            Optional<Consumer<byte[]>> onPty) {
        this.pid = pid;
        this.stream = stream;
        this.control = control;
        this.onStdout = onStdout;
        this.onStderr = onStderr;
        this.onPty = onPty;
    }

    /** Reads a start stream's first message: the process's pid ("Expected start event" otherwise). */
    static int readStart(ServerStream stream) {
        ProcessEvent event =
                nextEvent(stream).orElseThrow(() -> new SandboxException("Expected start event, the stream ended"));
        if (event.getEventCase() != ProcessEvent.EventCase.START) {
            throw new SandboxException("Expected start event, got " + event.getEventCase());
        }
        return event.getStart().getPid();
    }

    private static Optional<ProcessEvent> nextEvent(ServerStream stream) {
        Optional<byte[]> message = stream.next();
        if (message.isEmpty()) {
            return Optional.empty();
        }
        try {
            // StartResponse and ConnectResponse have the same single field: one parser reads both
            return Optional.of(StartResponse.parseFrom(message.get()).getEvent());
        } catch (InvalidProtocolBufferException e) {
            throw new SandboxException("envd sent a malformed process event", e);
        }
    }

    /** Reads events until the process ends or the stream is closed; completes {@link #onExit()}. */
    void pump() {
        try {
            ProcessEvent.EndEvent endEvent = null;
            while (true) {
                Optional<ProcessEvent> next = nextEvent(stream);
                if (next.isEmpty()) {
                    break;
                }
                ProcessEvent event = next.get();
                switch (event.getEventCase()) {
                    case DATA:
                        deliver(event.getData());
                        break;
                    case END:
                        endEvent = event.getEnd();
                        break;
                    default:
                        break; // start (again) and keepalives
                }
            }
            String outTail = stdoutDecoder.finish();
            String errTail = stderrDecoder.finish();
            append(stdout, outTail, onStdout);
            append(stderr, errTail, onStderr);
            if (endEvent != null) {
                end.complete(new CommandResult(
                        endEvent.getExitCode(),
                        stdout.toString(),
                        stderr.toString(),
                        endEvent.hasError() && !endEvent.getError().isEmpty()
                                ? Optional.of(endEvent.getError())
                                : Optional.empty()));
            } else if (stream.isClosed()) {
                end.completeExceptionally(
                        new SandboxException("disconnected from process " + pid + " (it keeps running)"));
            } else {
                end.completeExceptionally(new SandboxException("Process exited without a result"));
            }
        } catch (RuntimeException e) {
            end.completeExceptionally(e);
        } finally {
            stream.close();
        }
    }

    private void deliver(ProcessEvent.DataEvent data) {
        switch (data.getOutputCase()) {
            case STDOUT:
                append(stdout, stdoutDecoder.feed(data.getStdout().toByteArray()), onStdout);
                break;
            case STDERR:
                append(stderr, stderrDecoder.feed(data.getStderr().toByteArray()), onStderr);
                break;
            case PTY:
                byte[] bytes = data.getPty().toByteArray();
                stdout.append(new String(bytes, StandardCharsets.UTF_8));
                onPty.ifPresent(c -> c.accept(bytes));
                break;
            default:
                break;
        }
    }

    private static void append(StringBuffer into, String text, Optional<Consumer<String>> callback) {
        if (!text.isEmpty()) {
            into.append(text);
            callback.ifPresent(c -> c.accept(text));
        }
    }

    /** The process id. */
    public int pid() {
        return pid;
    }

    /** The stdout received so far (for a terminal: its output, decoded as UTF-8). */
    public String stdout() {
        return stdout.toString();
    }

    /** The stderr received so far. */
    public String stderr() {
        return stderr.toString();
    }

    /**
     * Completes with the result when the process ends (whatever its exit code), or exceptionally when the stream
     * failed (e.g. {@link io.agentenv.sdk.TimeoutException}) or was disconnected.
     */
    public CompletableFuture<CommandResult> onExit() {
        return end.copy();
    }

    /** The result if the process has ended. */
    public Optional<CommandResult> result() {
        return end.isDone() && !end.isCompletedExceptionally() ? Optional.of(end.join()) : Optional.empty();
    }

    /**
     * Waits for the process to end and returns its result; throws {@link CommandExitException} when its exit code is
     * not 0, or the failure of the stream.
     */
    public CommandResult waitFor() {
        CommandResult result;
        try {
            result = end.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxException("interrupted while waiting for process " + pid, e);
        } catch (ExecutionException | CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw new SandboxException("process " + pid + " failed", cause);
        }
        if (result.exitCode() != 0) {
            throw new CommandExitException(result);
        }
        return result;
    }

    /** Sends SIGKILL to the process; false when envd no longer knows it. */
    public boolean kill() {
        return control.kill(pid);
    }

    /** Writes to the process's stdin (it must have been started with {@code stdin(true)}). */
    public void sendStdin(String data) {
        control.sendStdin(pid, data.getBytes(StandardCharsets.UTF_8));
    }

    /** Writes bytes to the process's stdin. */
    public void sendStdin(byte[] data) {
        control.sendStdin(pid, data.clone());
    }

    /** Closes the process's stdin (it sees end of file). */
    public void closeStdin() {
        control.closeStdin(pid);
    }

    /** Stops receiving output; the process keeps running (reach it again with {@code connect(pid)}). */
    public void disconnect() {
        stream.close();
    }

    /** Same as {@link #disconnect()}. */
    @Override
    public void close() {
        disconnect();
    }
}
