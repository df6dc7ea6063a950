package io.agentenv.envd.process;

import static java.util.Objects.requireNonNull;

import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** A process started by {@link NativeSpawn}: its pipes, and its exit status once {@code waitpid} reported it. */
final class SpawnedProcess extends Process {
    private final long pid;
    private final OutputStream stdin;
    private final InputStream stdout;
    private final InputStream stderr;
    private final CompletableFuture<Process> exit = new CompletableFuture<>();
    private volatile int status;

    SpawnedProcess(long pid, OutputStream stdin, InputStream stdout, InputStream stderr) {
        this.pid = pid;
        this.stdin = requireNonNull(stdin, "stdin is null");
        this.stdout = requireNonNull(stdout, "stdout is null");
        this.stderr = requireNonNull(stderr, "stderr is null");
    }

    void exited(int exitStatus) {
        status = exitStatus;
        exit.complete(this);
    }

    @Override
    public long pid() {
        return pid;
    }

    @Override
    public OutputStream getOutputStream() {
        return stdin;
    }

    @Override
    public InputStream getInputStream() {
        return stdout;
    }

    @Override
    public InputStream getErrorStream() {
        return stderr;
    }

    @Override
    public int waitFor() throws InterruptedException {
        try {
            exit.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
        return status;
    }

    @Override
    public boolean waitFor(long timeout, TimeUnit unit) throws InterruptedException {
        try {
            exit.get(timeout, unit);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    @Override
    public int exitValue() {
        if (!exit.isDone()) {
            throw new IllegalThreadStateException("process " + pid + " has not exited");
        }
        return status;
    }

    @Override
    public boolean isAlive() {
        return !exit.isDone();
    }

    @Override
    public CompletableFuture<Process> onExit() {
        return exit.copy();
    }

    /** SIGTERM to the process itself (envd signals whole groups through {@link PosixSignals}). */
    @Override
    public void destroy() {
        if (isAlive()) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy);
        }
    }

    @Override
    public Process destroyForcibly() {
        if (isAlive()) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
        return this;
    }

    @Override
    public String toString() {
        return "SpawnedProcess[pid=" + pid + (isAlive() ? "]" : ", exitValue=" + status + "]");
    }
}
