package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;

/** E2B schema {@code TemplateBuild}: the one build of a template ({@code buildID} equals the template's id). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TemplateBuild(
        @JsonProperty("buildID") String buildID,
        TemplateBuildStatus status,
        Instant createdAt,
        Instant updatedAt,
        int cpuCount,
        @JsonProperty("memoryMB") int memoryMB,
        @JsonProperty("diskSizeMB") int diskSizeMB,
        String envdVersion) {

    public TemplateBuild {
        requireNonNull(buildID, "buildID is null");
        requireNonNull(status, "status is null");
        requireNonNull(envdVersion, "envdVersion is null");
    }
}
