package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

/** A plain log line of the deprecated {@code GET /sandboxes/{id}/logs}; {@code timestamp} is RFC 3339. */
public record SandboxLog(String timestamp, String line) {
    public SandboxLog {
        requireNonNull(timestamp, "timestamp is null");
        requireNonNull(line, "line is null");
    }
}
