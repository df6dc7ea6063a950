package io.agentenv.backend.container.host;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ProcessRunner} on {@link ProcessBuilder}: argument arrays only, stdout and stderr drained on virtual threads
 * (a full pipe would block the child), a deadline after which the program and its descendants are killed.
 */
public final class JdkProcessRunner implements ProcessRunner {

    private static final Logger log = LoggerFactory.getLogger(JdkProcessRunner.class);
    private static final File DEV_NULL = new File("/dev/null");
    /** Output beyond this is read and dropped, so a chatty program can neither block nor exhaust the heap. */
    private static final int CAPTURE_LIMIT = 16 * 1024 * 1024;

    private static final int STDERR_TAIL_CHARS = 4000;
    /** After the program exits, how long a descendant that inherited its pipes may keep them open. */
    private static final Duration DRAIN_GRACE = Duration.ofSeconds(2);

    private static final Duration KILL_WAIT = Duration.ofSeconds(5);

    @Override
    public CommandResult run(Command command) throws CommandFailedException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command.argv());
        builder.redirectInput(
                command.stdin().isPresent() ? ProcessBuilder.Redirect.PIPE : ProcessBuilder.Redirect.from(DEV_NULL));
        boolean capture = command.output() == Command.Output.CAPTURE;
        builder.redirectOutput(capture ? ProcessBuilder.Redirect.PIPE : ProcessBuilder.Redirect.DISCARD);
        builder.redirectError(capture ? ProcessBuilder.Redirect.PIPE : ProcessBuilder.Redirect.DISCARD);

        long started = System.nanoTime();
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new CommandFailedException(
                    CommandFailedException.Reason.NOT_STARTED,
                    command.argv(),
                    OptionalInt.empty(),
                    String.valueOf(e.getMessage()),
                    e);
        }
        Drain stdout = capture ? Drain.start(process.getInputStream()) : Drain.none();
        Drain stderr = capture ? Drain.start(process.getErrorStream()) : Drain.none();
        command.stdin().ifPresent(bytes -> feed(process.getOutputStream(), bytes));

        boolean exited;
        try {
            exited = process.waitFor(command.timeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            kill(process);
            throw e;
        }
        if (!exited) {
            kill(process);
            stdout.finish();
            stderr.finish();
            log.atWarn()
                    .addKeyValue("command", command.display())
                    .addKeyValue("timeout_ms", command.timeout().toMillis())
                    .log("command timed out and was killed");
            throw new CommandFailedException(
                    CommandFailedException.Reason.TIMED_OUT,
                    command.argv(),
                    OptionalInt.empty(),
                    tail(stderr.text()),
                    null);
        }
        String out = stdout.finish();
        String err = stderr.finish();
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        int exit = process.exitValue();
        log.atDebug()
                .addKeyValue("command", command.display())
                .addKeyValue("exit", exit)
                .addKeyValue("took_ms", took.toMillis())
                .log("command finished");
        if (exit != 0) {
            throw new CommandFailedException(
                    CommandFailedException.Reason.EXITED_NONZERO,
                    command.argv(),
                    OptionalInt.of(exit),
                    tail(err),
                    null);
        }
        return new CommandResult(out, err, took);
    }

    private static void feed(OutputStream stdin, byte[] bytes) {
        Thread.ofVirtual().name("process-stdin").start(() -> {
            try (stdin) {
                stdin.write(bytes);
            } catch (IOException e) {
                log.debug("stdin closed early by the program: {}", e.getMessage()); // it exited without reading all
            }
        });
    }

    private static void kill(Process process) throws InterruptedException {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor(KILL_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static String tail(String text) {
        return text.length() <= STDERR_TAIL_CHARS ? text : text.substring(text.length() - STDERR_TAIL_CHARS);
    }

    /** Reads one stream to its end on a virtual thread, keeping at most {@link #CAPTURE_LIMIT} bytes. */
    private static final class Drain {
        private final InputStream in;
        private final ByteArrayOutputStream kept = new ByteArrayOutputStream();
        private final Thread thread;

        private Drain(InputStream in) {
            this.in = in;
            this.thread =
                    in == null ? null : Thread.ofVirtual().name("process-drain").unstarted(this::pump);
        }

        static Drain start(InputStream in) {
            Drain drain = new Drain(in);
            drain.thread.start();
            return drain;
        }

        static Drain none() {
            return new Drain(null);
        }

        private void pump() {
            byte[] buffer = new byte[8192];
            try (in) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    synchronized (kept) {
                        int room = CAPTURE_LIMIT - kept.size();
                        if (room > 0) {
                            kept.write(buffer, 0, Math.min(n, room));
                        }
                    }
                }
            } catch (IOException e) {
                // the stream was closed under us by finish(): keep what was read
            }
        }

        /** Waits for the end of the stream; if a descendant still holds the pipe open, stops reading. */
        String finish() throws InterruptedException {
            if (thread == null) {
                return "";
            }
            if (!thread.join(DRAIN_GRACE)) {
                try {
                    in.close();
                } catch (IOException ignored) {
                    // closing only unblocks the reader
                }
                thread.join(DRAIN_GRACE);
            }
            return text();
        }

        String text() {
            synchronized (kept) {
                return kept.toString(StandardCharsets.UTF_8);
            }
        }
    }
}
