package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;

/**
 * E2B schema {@code TemplateBuild}: a build of a template (a built-in template's one build has the template's id).
 *
 * @param finishedAt when it became ready or failed; null while it has not finished
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TemplateBuild(
        @JsonProperty("buildID") String buildID,
        TemplateBuildStatus status,
        Instant createdAt,
        Instant updatedAt,
        int cpuCount,
        @JsonProperty("memoryMB") int memoryMB,
        @JsonProperty("diskSizeMB") int diskSizeMB,
        String envdVersion,
        Instant finishedAt) {

    public TemplateBuild {
        requireNonNull(buildID, "buildID is null");
        requireNonNull(status, "status is null");
        requireNonNull(envdVersion, "envdVersion is null");
    }
}
