package io.agentenv.envd.protocol.rest;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** The body of {@code GET /logs}: {@code {"entries":[LogEntry],"nextCursor":N,"firstAvailable":M}}. */
public record LogPage(
        @JsonProperty(value = "entries", required = true) List<LogEntry> entries,
        @JsonProperty(value = "nextCursor", required = true) long nextCursor,

        @JsonProperty(value = "firstAvailable", required = true)
        long firstAvailable) {
    public LogPage {
        entries = List.copyOf(requireNonNull(entries, "entries is null"));
    }
}
