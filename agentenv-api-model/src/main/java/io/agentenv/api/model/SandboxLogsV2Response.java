package io.agentenv.api.model;

import java.util.List;

import static java.util.Objects.requireNonNull;

/** {@code GET /v2/sandboxes/{id}/logs}. */
public record SandboxLogsV2Response(List<SandboxLogEntry> logs) {
    public SandboxLogsV2Response {
        logs = List.copyOf(requireNonNull(logs, "logs is null"));
    }
}
