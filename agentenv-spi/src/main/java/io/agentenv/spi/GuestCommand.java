package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A command for envd to run to its end ({@code process.Process/Start}), as E2B's {@code commands.run} runs one.
 *
 * @param cmd     the program (a path, or a name envd finds on the PATH)
 * @param args    its arguments
 * @param user    the user it runs as (envd's default user when empty)
 * @param env     variables over the sandbox's defaults
 * @param cwd     the working directory (the user's home when empty)
 * @param timeout envd ends the command (and kills it) after this long; none when empty
 */
public record GuestCommand(
        String cmd,
        List<String> args,
        Optional<String> user,
        Map<String, String> env,
        Optional<String> cwd,
        Optional<Duration> timeout) {
    public GuestCommand {
        requireNonNull(cmd, "cmd is null");
        args = List.copyOf(args);
        requireNonNull(user, "user is null");
        env = Map.copyOf(env);
        requireNonNull(cwd, "cwd is null");
        requireNonNull(timeout, "timeout is null");
        if (cmd.isEmpty()) {
            throw new IllegalArgumentException("cmd is empty");
        }
    }

    /** {@code /bin/bash -l -c script}, as the SDK's {@code commands.run(script)} starts it. */
    public static GuestCommand shell(
            String script, Optional<String> user, Map<String, String> env, Optional<String> cwd) {
        return new GuestCommand("/bin/bash", List.of("-l", "-c", script), user, env, cwd, Optional.empty());
    }

    /** Where a running command's output goes, chunk by chunk, as envd sends it. */
    public interface Output {
        void stdout(byte[] chunk);

        void stderr(byte[] chunk);
    }

    /**
     * How a command ended.
     *
     * @param exitCode its exit code (-1 when a signal ended it)
     * @param exited   whether it exited (false: a signal ended it)
     * @param status   envd's description, e.g. {@code exit status 1} or {@code signal: killed}
     */
    public record Exit(int exitCode, boolean exited, String status) {
        public Exit {
            requireNonNull(status, "status is null");
        }

        public boolean succeeded() {
            return exited && exitCode == 0;
        }
    }
}
