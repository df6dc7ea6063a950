package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;

/** E2B schema {@code BuildLogEntry}: a line of a build's log ({@code level}: debug, info, warn or error). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record BuildLogEntry(Instant timestamp, String level, String message, String step) {
    public BuildLogEntry {
        requireNonNull(timestamp, "timestamp is null");
        requireNonNull(level, "level is null");
        requireNonNull(message, "message is null");
    }
}
