package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * A page of envd's log journal, oldest first.
 *
 * @param entries        the entries, ascending by {@link EnvdLogEntry#seq()}
 * @param nextCursor     the cursor for the next page
 * @param firstAvailable the oldest sequence number still kept; greater than the cursor asked for means entries were
 *                       dropped in between
 */
public record EnvdLogPage(List<EnvdLogEntry> entries, long nextCursor, long firstAvailable) {
    public EnvdLogPage {
        entries = List.copyOf(requireNonNull(entries, "entries is null"));
        if (nextCursor < 0 || firstAvailable < 0) {
            throw new IllegalArgumentException("cursors must be >= 0");
        }
    }
}
