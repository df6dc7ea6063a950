package io.agentenv.envd.process;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Signals whole process groups with {@code kill -s SIG -- -PGID} (the JDK can only signal one pid): util-linux
 * {@code kill}, or the shell builtin of envd's fallback shell on an image without a {@code kill} program. A command
 * rather than an FFM call to {@code kill(2)}: the FFM linker costs ~300 classes and tens of milliseconds at start-up, a
 * signal costs one short fork/exec and is rare.
 */
final class PosixSignals {
    static final int SIGKILL = 9;
    static final int SIGTERM = 15;

    /** The kill command's words before its own arguments, if there is one. */
    private final Optional<List<String>> killCommand;

    PosixSignals(Optional<List<String>> killCommand) {
        this.killCommand = requireNonNull(killCommand, "killCommand is null").map(List::copyOf);
    }

    /**
     * The image's {@code kill}, else the {@code kill} builtin of {@code fallbackShell}.
     *
     * @param fallbackShell a POSIX shell envd may use when the image has none ({@code --fallback-shell})
     */
    static PosixSignals forThisMachine(Optional<Path> fallbackShell) {
        Optional<List<String>> program = List.of("/usr/bin/kill", "/bin/kill").stream()
                .map(Path::of)
                .filter(Files::isExecutable)
                .findFirst()
                .map(p -> List.of(p.toString()));
        return new PosixSignals(program.or(() -> fallbackShell
                .filter(Files::isExecutable)
                .map(sh -> List.of(sh.toString(), "-c", "kill \"$@\"", "kill"))));
    }

    /** Signals the process group led by {@code pid}, falling back to the process alone. True if delivered. */
    boolean signalGroup(long pid, int signal) {
        if (killCommand.isPresent() && run(killCommand.get(), "-s", String.valueOf(signal), "--", "-" + pid)) {
            return true;
        }
        Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        return handle.map(h -> signal == SIGKILL ? h.destroyForcibly() : h.destroy())
                .orElse(false);
    }

    /** Signals only the process group {@code pgid} (never a single process that may have reused the number). */
    boolean signalGroupOnly(long pgid, int signal) {
        return killCommand.isPresent() && run(killCommand.get(), "-s", String.valueOf(signal), "--", "-" + pgid);
    }

    private static boolean run(List<String> program, String... args) {
        List<String> command = new ArrayList<>(program);
        command.addAll(List.of(args));
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
