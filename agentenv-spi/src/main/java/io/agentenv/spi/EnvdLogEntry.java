package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.OptionalInt;

/**
 * One line of envd's log journal.
 *
 * @param seq       its sequence number (ascending, never reused within one envd run)
 * @param timestamp when it was written
 * @param source    envd's own log or a process
 * @param level     {@code DEBUG}, {@code INFO}, {@code WARN} or {@code ERROR} (as envd wrote it, upper case)
 * @param pid       the process, for {@link Source#PROCESS}
 * @param stream    the logger name for envd; {@code event}, {@code stdout}, {@code stderr} or {@code pty} for processes
 * @param message   the text (process output as it came, possibly with a trailing newline)
 */
public record EnvdLogEntry(
        long seq, Instant timestamp, Source source, String level, OptionalInt pid, String stream, String message) {
    public enum Source {
        ENVD,
        PROCESS
    }

    public EnvdLogEntry {
        if (seq < 0) {
            throw new IllegalArgumentException("seq must be >= 0");
        }
        requireNonNull(timestamp, "timestamp is null");
        requireNonNull(source, "source is null");
        requireNonNull(level, "level is null");
        requireNonNull(pid, "pid is null");
        requireNonNull(stream, "stream is null");
        requireNonNull(message, "message is null");
    }
}
