package io.agentenv.envd.logs;

import static java.util.Objects.requireNonNull;

import java.io.PrintStream;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.slf4j.event.KeyValuePair;
import org.slf4j.event.Level;

/**
 * Where envd's log lines go: key-value lines on stderr ({@code <time> <LEVEL> <logger> sandbox_id=<id> <message> k=v...})
 * and the {@link LogJournal}. envd ships its own tiny SLF4J provider ({@link EnvdLoggerProvider}) instead of logback:
 * logback's initialisation (pattern parsing, date formatting with locale data, ~250 classes) cost a large share of the
 * 150 ms start-up budget, and envd needs nothing but these two sinks.
 */
public final class Logging {
    /** The sink every envd logger writes to; replaced once by {@link #configure}. */
    record Sink(Level threshold, Optional<LogJournal> journal, String sandboxId, PrintStream out) {
        Sink {
            requireNonNull(threshold, "threshold is null");
            requireNonNull(journal, "journal is null");
            requireNonNull(sandboxId, "sandboxId is null");
            requireNonNull(out, "out is null");
        }

        boolean enabled(Level level) {
            return level.toInt() >= threshold.toInt();
        }

        void write(String logger, Level level, String message, List<KeyValuePair> pairs, Throwable error) {
            StringBuilder kv = new StringBuilder();
            if (pairs != null) {
                for (KeyValuePair pair : pairs) {
                    kv.append(' ').append(pair.key).append('=').append(pair.value);
                }
            }
            if (error != null) {
                kv.append(" error=\"").append(error).append('"');
            }
            String shortName = logger.substring(logger.lastIndexOf('.') + 1);
            out.println(
                    Instant.now() + " " + level + " " + shortName + " sandbox_id=" + sandboxId + " " + message + kv);
            journal.ifPresent(j -> j.envd(level.toString(), logger, message + kv));
        }
    }

    private static volatile Sink sink = new Sink(Level.WARN, Optional.empty(), "-", System.err);

    private Logging() {}

    /** Called once from {@code Main}, before anything logs. */
    public static void configure(LogJournal journal, Level threshold, String sandboxId) {
        sink = new Sink(threshold, Optional.of(journal), sandboxId, System.err);
    }

    static Sink sink() {
        return sink;
    }
}
