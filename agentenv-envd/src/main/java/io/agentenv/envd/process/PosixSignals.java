package io.agentenv.envd.process;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Signals whole process groups with util-linux {@code kill -s SIG -- -PGID} (the JDK can only signal one pid).
 * A command rather than an FFM call to {@code kill(2)}: the FFM linker costs ~300 classes and tens of milliseconds at
 * start-up, a signal costs one short fork/exec and is rare.
 */
final class PosixSignals {
    static final int SIGKILL = 9;
    static final int SIGTERM = 15;

    private final Optional<Path> killCommand;

    PosixSignals(Optional<Path> killCommand) {
        this.killCommand = requireNonNull(killCommand, "killCommand is null");
    }

    static PosixSignals forThisMachine() {
        return new PosixSignals(List.of("/usr/bin/kill", "/bin/kill").stream()
                .map(Path::of)
                .filter(Files::isExecutable)
                .findFirst());
    }

    /** Signals the process group led by {@code pid}, falling back to the process alone. True if delivered. */
    boolean signalGroup(long pid, int signal) {
        if (killCommand.isPresent()
                && run(killCommand.get().toString(), "-s", String.valueOf(signal), "--", "-" + pid)) {
            return true;
        }
        Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        return handle.map(h -> signal == SIGKILL ? h.destroyForcibly() : h.destroy())
                .orElse(false);
    }

    /** Signals only the process group {@code pgid} (never a single process that may have reused the number). */
    boolean signalGroupOnly(long pgid, int signal) {
        return killCommand.isPresent()
                && run(killCommand.get().toString(), "-s", String.valueOf(signal), "--", "-" + pgid);
    }

    private static boolean run(String... command) {
        try {
            Process kill = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (!kill.waitFor(5, TimeUnit.SECONDS)) {
                kill.destroyForcibly();
                return false;
            }
            return kill.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
