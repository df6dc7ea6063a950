package io.agentenv.sdk.commands;

import java.util.Objects;
import java.util.Optional;

/**
 * How a command ended: its exit code (-1 when a signal ended it), what it wrote, and envd's error text (e.g.
 * {@code exit status 1}, {@code signal: killed}).
 *
 * @param exitCode the exit code
 * @param stdout   everything the command wrote to stdout (UTF-8)
 * @param stderr   everything the command wrote to stderr (UTF-8)
 * @param error    envd's description of a failure, if any
 */
public record CommandResult(int exitCode, String stdout, String stderr, Optional<String> error) {
    /** Checks the fields. */
    public CommandResult {
        Objects.requireNonNull(stdout, "stdout");
        Objects.requireNonNull(stderr, "stderr");
        Objects.requireNonNull(error, "error");
    }

    /** Whether it exited with 0. */
    public boolean succeeded() {
        return exitCode == 0;
    }
}
