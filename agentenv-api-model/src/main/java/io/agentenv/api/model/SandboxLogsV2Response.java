package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import java.util.List;

/** {@code GET /v2/sandboxes/{id}/logs}. */
public record SandboxLogsV2Response(List<SandboxLogEntry> logs) {
    public SandboxLogsV2Response {
        logs = List.copyOf(requireNonNull(logs, "logs is null"));
    }
}
