package io.agentenv.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** aenv run in-process against a {@link FakeSandboxServer}: captured stdout and stderr, and the Ctrl-C hook exec registers. */
final class CliFixture implements AutoCloseable {
    private final FakeSandboxServer server;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final AtomicReference<Runnable> interruptHook = new AtomicReference<>();

    CliFixture() throws IOException {
        server = new FakeSandboxServer();
    }

    FakeSandboxServer server() {
        return server;
    }

    /** Runs aenv with this stdin (a terminal or not) and the given stdout; returns its exit code. */
    int run(InputStream stdin, boolean terminal, OutputStream stdout, String... args) {
        return run(new Stdio(stdin, stdout, err, terminal), args);
    }

    /** Runs aenv with stdin attached to this terminal. */
    int run(InputStream stdin, Terminal terminal, String... args) {
        return run(new Stdio(stdin, out, err, true, terminal), args);
    }

    private int run(Stdio stdio, String... args) {
        Map<String, String> env = Map.of("AENV_API_URL", server.url(), "AENV_API_KEY", FakeSandboxServer.KEY);
        return Aenv.run(args, env, stdio, interruptHook::set);
    }

    int run(InputStream stdin, boolean terminal, String... args) {
        return run(stdin, terminal, out, args);
    }

    /** With an empty stdin that is a terminal (so exec does not forward it). */
    int run(String... args) {
        return run(InputStream.nullInputStream(), true, args);
    }

    byte[] stdoutBytes() {
        return out.toByteArray();
    }

    String stdout() {
        return out.toString(StandardCharsets.UTF_8);
    }

    String stderr() {
        return err.toString(StandardCharsets.UTF_8);
    }

    /** What exec registered for Ctrl-C, or null before it did. */
    Runnable interruptHook() {
        return interruptHook.get();
    }

    /** Waits for a condition, failing after 10 s. */
    static void await(BooleanSupplier condition, String what) {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(10));
        while (!condition.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("timed out waiting for " + what);
            }
            LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
        }
    }

    @Override
    public void close() {
        server.close();
    }
}
