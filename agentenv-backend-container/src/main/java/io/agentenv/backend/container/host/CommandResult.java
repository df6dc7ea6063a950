package io.agentenv.backend.container.host;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/** A program that exited with status 0: what it printed (empty when output was discarded) and how long it ran. */
public record CommandResult(String stdout, String stderr, Duration took) {
    public CommandResult {
        requireNonNull(stdout, "stdout is null");
        requireNonNull(stderr, "stderr is null");
        requireNonNull(took, "took is null");
    }
}
