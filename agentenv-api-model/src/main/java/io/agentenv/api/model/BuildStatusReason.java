package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/** E2B schema {@code BuildStatusReason}: why a build failed, and the step that did. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record BuildStatusReason(String message, String step, List<BuildLogEntry> logEntries) {
    public BuildStatusReason {
        requireNonNull(message, "message is null");
        logEntries = logEntries == null ? List.of() : List.copyOf(logEntries);
    }
}
