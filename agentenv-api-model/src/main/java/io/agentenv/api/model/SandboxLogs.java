package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import java.util.List;

/** The deprecated {@code GET /sandboxes/{id}/logs}: the same entries as plain lines and as structured entries. */
public record SandboxLogs(List<SandboxLog> logs, List<SandboxLogEntry> logEntries) {
    public SandboxLogs {
        logs = List.copyOf(requireNonNull(logs, "logs is null"));
        logEntries = List.copyOf(requireNonNull(logEntries, "logEntries is null"));
    }
}
