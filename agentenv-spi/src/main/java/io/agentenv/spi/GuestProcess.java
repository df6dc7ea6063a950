package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A process envd started and that is still running ({@code process.Process/List}).
 *
 * @param pid  its process id in the guest
 * @param tag  the tag it was started with, if any
 * @param cmd  the command
 * @param args its arguments
 * @param envs the environment given at start (on top of envd's defaults)
 * @param cwd  the working directory given at start, if any
 */
public record GuestProcess(
        int pid, Optional<String> tag, String cmd, List<String> args, Map<String, String> envs, Optional<String> cwd) {
    public GuestProcess {
        if (pid < 1) {
            throw new IllegalArgumentException("pid must be >= 1, got " + pid);
        }
        requireNonNull(tag, "tag is null");
        requireNonNull(cmd, "cmd is null");
        args = List.copyOf(requireNonNull(args, "args is null"));
        envs = Map.copyOf(requireNonNull(envs, "envs is null"));
        requireNonNull(cwd, "cwd is null");
    }
}
