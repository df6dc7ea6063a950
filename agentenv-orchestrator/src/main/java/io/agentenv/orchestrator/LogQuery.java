package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.Locale;
import java.util.Optional;

/**
 * What a sandbox logs request asks for (E2B's {@code /v2/sandboxes/{id}/logs}).
 *
 * @param cursor    FORWARD: entries at or after it; BACKWARD: at or before it; empty: from the oldest / the newest
 * @param limit     at most this many entries, 1..1000
 * @param direction FORWARD returns oldest first, BACKWARD newest first
 * @param minLevel  entries below this level are left out
 * @param search    case-sensitive substring of the message
 */
public record LogQuery(
        Optional<Instant> cursor, int limit, Direction direction, Level minLevel, Optional<String> search) {
    public static final int MAX_LIMIT = 1000;

    public enum Direction {
        FORWARD,
        BACKWARD
    }

    /** E2B's log levels, lowest first. */
    public enum Level {
        DEBUG,
        INFO,
        WARN,
        ERROR;

        /** envd's level names (as its logger writes them) mapped onto E2B's four; unknown ones count as INFO. */
        public static Level ofEnvd(String level) {
            return switch (level.toUpperCase(Locale.ROOT)) {
                case "TRACE", "DEBUG" -> DEBUG;
                case "WARN", "WARNING" -> WARN;
                case "ERROR", "FATAL" -> ERROR;
                default -> INFO;
            };
        }

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public LogQuery {
        requireNonNull(cursor, "cursor is null");
        if (limit < 1 || limit > MAX_LIMIT) {
            throw AgentEnvException.invalidArgument("limit must be between 1 and " + MAX_LIMIT);
        }
        requireNonNull(direction, "direction is null");
        requireNonNull(minLevel, "minLevel is null");
        requireNonNull(search, "search is null");
    }
}
