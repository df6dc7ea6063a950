package io.agentenv.envd.process;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.ByteString;
import com.pty4j.PtyProcess;
import com.pty4j.WinSize;
import io.agentenv.envd.logs.LogJournal;
import io.agentenv.envd.protocol.connect.ConnectCode;
import io.agentenv.envd.protocol.connect.RpcException;
import io.agentenv.envd.protocol.process.ProcessConfig;
import io.agentenv.envd.protocol.process.ProcessEvent;
import io.agentenv.envd.protocol.process.ProcessInfo;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A started process (pipes or a pseudo-terminal) and everyone listening to it. Output is read by virtual threads and
 * fanned out to the current subscriptions; nobody listening means the output is only journaled. The end event is
 * kept after exit so a late {@code Connect} still gets start + end.
 */
final class ChildProcess {
    private static final Logger log = LoggerFactory.getLogger(ChildProcess.class);
    private static final int PIPE_CHUNK = 32 * 1024;
    private static final int PTY_CHUNK = 16 * 1024;
    /**
     * After exit, how long the end event waits for output readers that make no progress (a background child may keep
     * the pipe or terminal open for ever). Readers that are delivering to a slow client are always waited for.
     */
    private static final Duration DRAIN = Duration.ofMillis(500);

    enum State {
        RUNNING,
        EXITED
    }

    enum Kind {
        PIPES,
        PTY
    }

    private final long pid;
    private final Kind kind;
    private final ProcessConfig config;
    private final Optional<String> tag;
    private final Process process;
    private final Executor readers;
    private final PosixSignals signals;
    private final LogJournal journal;
    private final Clock clock;

    private final AtomicReference<State> state = new AtomicReference<>(State.RUNNING);
    private final AtomicInteger signalSent = new AtomicInteger();
    private final Object lock = new Object();
    private final List<Subscription> subscribers = new ArrayList<>(); // guarded by lock
    private ProcessEvent.EndEvent end; // guarded by lock
    private volatile Instant exitedAt;
    private final List<Consumer<ChildProcess>> endListeners = new ArrayList<>(); // guarded by lock
    private boolean endListenersRan; // guarded by lock
    /** Output readers currently handing a chunk to subscribers (possibly waiting for a slow client). */
    private final AtomicInteger delivering = new AtomicInteger();

    private volatile long lastOutputNanos = System.nanoTime();

    /** Serialises writes to the child's input so concurrent SendInput calls cannot interleave bytes. */
    private final ReentrantLock inputOrder = new ReentrantLock();

    private OutputStream input; // guarded by inputOrder; null once closed or when stdin was not requested

    /** @param readers runs the loops that read the process's output (virtual threads unless a read pins a carrier) */
    ChildProcess(
            Kind kind,
            Process process,
            Executor readers,
            ProcessConfig config,
            Optional<String> tag,
            boolean stdin,
            PosixSignals signals,
            LogJournal journal,
            Clock clock) {
        this.kind = requireNonNull(kind, "kind is null");
        this.process = requireNonNull(process, "process is null");
        this.readers = requireNonNull(readers, "readers is null");
        this.config = requireNonNull(config, "config is null");
        this.tag = requireNonNull(tag, "tag is null");
        this.signals = requireNonNull(signals, "signals is null");
        this.journal = requireNonNull(journal, "journal is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.pid = process.pid();
        this.input = stdin || kind == Kind.PTY ? process.getOutputStream() : null;
    }

    long pid() {
        return pid;
    }

    Kind kind() {
        return kind;
    }

    Optional<String> tag() {
        return tag;
    }

    boolean isRunning() {
        return state.get() == State.RUNNING;
    }

    Optional<Instant> exitedAt() {
        return Optional.ofNullable(exitedAt);
    }

    /** Runs {@code action} once the end event is set (at once if it already is); actions run in the order given. */
    void whenEnded(Consumer<ChildProcess> action) {
        requireNonNull(action, "action is null");
        synchronized (lock) {
            if (!endListenersRan) {
                endListeners.add(action); // run by finish(), after those registered earlier
                return;
            }
        }
        action.accept(this);
    }

    ProcessInfo info() {
        ProcessInfo.Builder info = ProcessInfo.newBuilder().setConfig(config).setPid((int) pid);
        tag.ifPresent(info::setTag);
        return info.build();
    }

    /** Starts the output readers and the exit waiter; {@code deadline} kills the process group when reached. */
    void start(Optional<Instant> deadline) {
        List<CompletableFuture<Void>> pumps = new ArrayList<>();
        if (kind == Kind.PTY) {
            pumps.add(pump("pty", process.getInputStream(), PTY_CHUNK));
        } else {
            pumps.add(pump("stdout", process.getInputStream(), PIPE_CHUNK));
            pumps.add(pump("stderr", process.getErrorStream(), PIPE_CHUNK));
        }
        Thread.ofVirtual().name("envd-wait-" + pid).start(() -> awaitExit(deadline, pumps));
    }

    /** A new listener; if the process already exited it only yields the end event. */
    Subscription subscribe() {
        synchronized (lock) {
            if (end != null) {
                return Subscription.ended(end);
            }
            Subscription[] self = new Subscription[1];
            self[0] = new Subscription(() -> {
                synchronized (lock) {
                    subscribers.remove(self[0]);
                }
            });
            subscribers.add(self[0]);
            return self[0];
        }
    }

    void writeStdin(byte[] data) throws IOException {
        if (kind == Kind.PTY) {
            throw new RpcException(ConnectCode.FAILED_PRECONDITION, "process " + pid + " has a pty: send pty input");
        }
        write(data, "stdin is not enabled or already closed for process " + pid);
    }

    void writePty(byte[] data) throws IOException {
        if (kind != Kind.PTY) {
            throw new RpcException(ConnectCode.FAILED_PRECONDITION, "process " + pid + " has no pty");
        }
        write(data, "pty of process " + pid + " is closed");
    }

    private void write(byte[] data, String closedMessage) throws IOException {
        inputOrder.lock();
        try {
            if (input == null || !isRunning()) {
                throw new RpcException(ConnectCode.FAILED_PRECONDITION, closedMessage);
            }
            input.write(data);
            input.flush();
        } catch (IOException e) {
            throw new RpcException(
                    ConnectCode.FAILED_PRECONDITION, "input of process " + pid + " is closed: " + e.getMessage());
        } finally {
            inputOrder.unlock();
        }
    }

    void closeStdin() throws IOException {
        if (kind == Kind.PTY) {
            throw new RpcException(
                    ConnectCode.FAILED_PRECONDITION,
                    "process " + pid + " has a pty: send EOT (Ctrl-D) as pty input instead");
        }
        inputOrder.lock();
        try {
            if (input != null) {
                OutputStream closing = input;
                input = null;
                closing.close();
            }
        } finally {
            inputOrder.unlock();
        }
    }

    void resize(int cols, int rows) {
        if (!(process instanceof PtyProcess pty)) {
            throw new RpcException(ConnectCode.FAILED_PRECONDITION, "process " + pid + " has no pty");
        }
        if (cols < 1 || rows < 1 || cols > 65535 || rows > 65535) {
            throw RpcException.invalidArgument("pty size must be between 1 and 65535: " + cols + "x" + rows);
        }
        if (isRunning()) {
            pty.setWinSize(new WinSize(cols, rows));
        }
    }

    /** Sends {@code signal} to the process group. False if the process has already exited. */
    boolean signal(int signal) {
        if (!isRunning()) {
            return false;
        }
        signalSent.set(signal);
        return signals.signalGroup(pid, signal);
    }

    /** Kills the process group even after the leader exited (background children it left behind). */
    void killGroup() {
        signalSent.compareAndSet(0, PosixSignals.SIGKILL);
        signals.signalGroupOnly(pid, PosixSignals.SIGKILL);
    }

    private CompletableFuture<Void> pump(String stream, InputStream in, int chunkSize) {
        return CompletableFuture.runAsync(
                () -> {
                    byte[] buffer = new byte[chunkSize];
                    try (in) {
                        for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                            if (n > 0) {
                                lastOutputNanos = System.nanoTime();
                                delivering.incrementAndGet();
                                try {
                                    publish(stream, buffer, n);
                                } finally {
                                    delivering.decrementAndGet();
                                    lastOutputNanos = System.nanoTime();
                                }
                            }
                        }
                    } catch (IOException e) {
                        // EIO on a pty master after the last slave closed, or a closed pipe: the end of output
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                readers);
    }

    private void publish(String stream, byte[] buffer, int length) throws InterruptedException {
        ByteString bytes = ByteString.copyFrom(buffer, 0, length);
        ProcessEvent.DataEvent.Builder data = ProcessEvent.DataEvent.newBuilder();
        switch (stream) {
            case "stdout" -> data.setStdout(bytes);
            case "stderr" -> data.setStderr(bytes);
            default -> data.setPty(bytes);
        }
        ProcessEvent.DataEvent event = data.build();
        journal.processOutput((int) pid, stream, buffer, length);
        List<Subscription> targets;
        synchronized (lock) {
            targets = List.copyOf(subscribers);
        }
        for (Subscription s : targets) {
            s.offerData(event, length);
        }
    }

    private void awaitExit(Optional<Instant> deadline, List<CompletableFuture<Void>> pumps) {
        try {
            if (deadline.isPresent()) {
                long millis = Math.max(
                        0, Duration.between(clock.instant(), deadline.get()).toMillis());
                if (!process.waitFor(millis, TimeUnit.MILLISECONDS)) {
                    log.atInfo().addKeyValue("pid", pid).log("process deadline reached, killing its process group");
                    signal(PosixSignals.SIGKILL);
                }
            }
            int status = process.waitFor();
            awaitOutput(pumps);
            finish(endEvent(status));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            finish(ProcessEvent.EndEvent.newBuilder()
                    .setExitCode(-1)
                    .setStatus("unknown")
                    .setError("envd stopped")
                    .build());
        }
    }

    /**
     * Waits until the output readers have passed on everything the process wrote. A reader normally ends at EOF right
     * after the exit; but a background child may hold the pipe or terminal open for ever, so the wait also ends once no
     * reader has delivered anything for {@link #DRAIN} since the exit (or since its last output, if later). A reader
     * blocked on a slow client is always waited for (flow control bounds that).
     */
    private void awaitOutput(List<CompletableFuture<Void>> pumps) throws InterruptedException {
        long exitedNanos = System.nanoTime();
        for (CompletableFuture<Void> pump : pumps) {
            while (!pump.isDone()) {
                long idle = System.nanoTime() - Math.max(lastOutputNanos, exitedNanos);
                if (delivering.get() == 0 && idle >= DRAIN.toNanos()) {
                    return;
                }
                long wait = delivering.get() > 0 ? DRAIN.toNanos() : Math.max(1, DRAIN.toNanos() - idle);
                try {
                    pump.get(wait, TimeUnit.NANOSECONDS);
                } catch (TimeoutException | ExecutionException e) {
                    // not done yet (checked again above), or the reader failed (then it is done)
                }
            }
        }
    }

    /** The JDK reports death by signal N as 128+N; it is reported as a signal only when envd sent that signal. */
    ProcessEvent.EndEvent endEvent(int status) {
        int sent = signalSent.get();
        if (sent != 0 && status == 128 + sent) {
            String text = sent == PosixSignals.SIGKILL ? "signal: killed" : "signal: terminated";
            return ProcessEvent.EndEvent.newBuilder()
                    .setExitCode(-1)
                    .setExited(false)
                    .setStatus(text)
                    .setError(text)
                    .build();
        }
        ProcessEvent.EndEvent.Builder end = ProcessEvent.EndEvent.newBuilder()
                .setExitCode(status)
                .setExited(true)
                .setStatus("exit status " + status);
        if (status != 0) {
            end.setError("exit status " + status);
        }
        return end.build();
    }

    private void finish(ProcessEvent.EndEvent event) {
        if (!state.compareAndSet(State.RUNNING, State.EXITED)) {
            return;
        }
        List<Subscription> targets;
        synchronized (lock) {
            end = event;
            exitedAt = clock.instant();
            targets = List.copyOf(subscribers);
            subscribers.clear();
        }
        inputOrder.lock();
        try {
            if (input != null) {
                input.close();
                input = null;
            }
        } catch (IOException e) {
            // the child is gone; nothing to flush
        } finally {
            inputOrder.unlock();
        }
        // journaled before the end listeners run: one that acts on the end (the request warm-up takes back its journal
        // entries once its processes ended) must find the exit entry already written
        journal.processEvent((int) pid, "exited: " + event.getStatus());
        log.atInfo()
                .addKeyValue("pid", pid)
                .addKeyValue("status", event.getStatus())
                .log("process ended");
        while (true) {
            List<Consumer<ChildProcess>> listeners;
            synchronized (lock) {
                if (endListeners.isEmpty()) {
                    endListenersRan = true;
                    break;
                }
                listeners = List.copyOf(endListeners);
                endListeners.clear();
            }
            listeners.forEach(listener -> listener.accept(this));
        }
        for (Subscription s : targets) {
            s.offerEnd(event);
        }
    }
}
