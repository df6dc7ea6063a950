package io.agentenv.backend.container.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One process on the host, named by pid and start time (so a reused pid is never mistaken for it), read from
 * {@code /proc}. A zombie still exists (its parent has not reaped it) but no longer runs.
 */
public record HostProcess(long pid, long startTicks) {

    private static final Path PROC = Path.of("/proc");

    public HostProcess {
        if (pid <= 0) {
            throw new IllegalArgumentException("pid must be positive: " + pid);
        }
    }

    /** The process with this pid now, if there is one (zombie included). */
    public static Optional<HostProcess> of(long pid) throws IOException {
        return stat(pid).map(stat -> new HostProcess(pid, stat.startTicks()));
    }

    /** It has not exited: it exists and is not a zombie. */
    public boolean running() throws IOException {
        return stat(pid)
                .filter(s -> s.startTicks() == startTicks && s.state() != 'Z' && s.state() != 'X')
                .isPresent();
    }

    /** It is still in the process table (running or a zombie not reaped yet). */
    public boolean exists() throws IOException {
        return stat(pid).filter(s -> s.startTicks() == startTicks).isPresent();
    }

    /**
     * Sends it SIGKILL, if the pid still names this process (a zombie takes the signal harmlessly); false when it is
     * gone. The JDK's handle checks the start time it read against the process it signals, and this one's start time
     * is checked against that handle's process, so a pid reused meanwhile is never signalled.
     */
    public boolean kill() throws IOException {
        Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        if (handle.isEmpty() || !exists()) {
            return false;
        }
        return handle.get().destroyForcibly();
    }

    /** Its children (threads of the main thread only, which is where a single-threaded parent forks). */
    public List<HostProcess> children() throws IOException {
        String line;
        try {
            line = Files.readString(PROC.resolve(pid + "/task/" + pid + "/children"))
                    .strip();
        } catch (NoSuchFileException gone) {
            return List.of();
        }
        List<HostProcess> found = new ArrayList<>();
        if (line.isEmpty() || !exists()) {
            return found;
        }
        for (String child : line.split(" ")) {
            HostProcess.of(Long.parseLong(child)).ifPresent(found::add);
        }
        return found;
    }

    /** The executable's name as the kernel reports it ({@code comm}, at most 15 characters); empty once gone. */
    public Optional<String> name() throws IOException {
        try {
            String comm = Files.readString(PROC.resolve(pid + "/comm")).strip();
            return exists() ? Optional.of(comm) : Optional.empty();
        } catch (NoSuchFileException gone) {
            return Optional.empty();
        }
    }

    /** Its parent's pid now (0 once gone). */
    long parentPid() throws IOException {
        return stat(pid)
                .filter(s -> s.startTicks() == startTicks)
                .map(Stat::parentPid)
                .orElse(0L);
    }

    /** A zombie: exited, waiting for its parent to reap it. */
    boolean zombie() throws IOException {
        return stat(pid)
                .filter(s -> s.startTicks() == startTicks && s.state() == 'Z')
                .isPresent();
    }

    private record Stat(char state, long parentPid, long startTicks) {}

    /** Fields after the command name, which is in parentheses and may itself contain spaces or parentheses. */
    private static Optional<Stat> stat(long pid) throws IOException {
        String text;
        try {
            text = Files.readString(PROC.resolve(pid + "/stat"));
        } catch (NoSuchFileException gone) {
            return Optional.empty();
        }
        String[] fields = text.substring(text.lastIndexOf(')') + 2).split(" ");
        // fields[0] is field 3 (state), fields[1] field 4 (ppid); field 22 (starttime) is fields[19]
        return Optional.of(new Stat(fields[0].charAt(0), Long.parseLong(fields[1]), Long.parseLong(fields[19])));
    }
}
