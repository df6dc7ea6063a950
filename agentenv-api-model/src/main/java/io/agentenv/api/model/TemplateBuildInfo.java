package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * E2B schema {@code TemplateBuildInfo} ({@code GET /templates/{templateID}/builds/{buildID}/status}): the status, the
 * log entries from the requested offset, and the reason of a failure. {@code logs} is always empty, as upstream.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TemplateBuildInfo(
        @JsonProperty("templateID") String templateID,
        @JsonProperty("buildID") String buildID,
        TemplateBuildStatus status,
        List<BuildLogEntry> logEntries,
        List<String> logs,
        BuildStatusReason reason) {
    public TemplateBuildInfo {
        requireNonNull(templateID, "templateID is null");
        requireNonNull(buildID, "buildID is null");
        requireNonNull(status, "status is null");
        logEntries = logEntries == null ? List.of() : List.copyOf(logEntries);
        logs = logs == null ? List.of() : List.copyOf(logs);
    }
}
