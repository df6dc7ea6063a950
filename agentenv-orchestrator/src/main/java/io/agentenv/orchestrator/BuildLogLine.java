package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.Locale;
import java.util.Optional;

/**
 * One line of a build's log (E2B's {@code BuildLogEntry}): what the builder did, and the output of the steps' commands
 * as they ran.
 *
 * @param step the step it belongs to (its 1-based index, or {@code base} / {@code finalize}), when it belongs to one
 */
public record BuildLogLine(Instant timestamp, Level level, String message, Optional<String> step) {
    public enum Level {
        DEBUG,
        INFO,
        WARN,
        ERROR;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public BuildLogLine {
        requireNonNull(timestamp, "timestamp is null");
        requireNonNull(level, "level is null");
        requireNonNull(message, "message is null");
        requireNonNull(step, "step is null");
    }
}
