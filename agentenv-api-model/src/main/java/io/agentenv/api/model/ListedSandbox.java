package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** One item of {@code GET /sandboxes} and {@code GET /v2/sandboxes} (E2B schema {@code ListedSandbox}). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ListedSandbox(
        @JsonProperty("templateID") String templateID,
        String alias,
        @JsonProperty("sandboxID") String sandboxID,
        @JsonProperty("clientID") String clientID,
        Instant startedAt,
        Instant endAt,
        int cpuCount,
        @JsonProperty("memoryMB") int memoryMB,
        @JsonProperty("diskSizeMB") int diskSizeMB,
        Map<String, String> metadata,
        SandboxState state,
        String envdVersion,
        List<SandboxVolumeMount> volumeMounts) {

    public ListedSandbox {
        requireNonNull(templateID, "templateID is null");
        requireNonNull(sandboxID, "sandboxID is null");
        requireNonNull(clientID, "clientID is null");
        requireNonNull(startedAt, "startedAt is null");
        requireNonNull(endAt, "endAt is null");
        requireNonNull(state, "state is null");
        requireNonNull(envdVersion, "envdVersion is null");
        metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
        volumeMounts = volumeMounts == null ? List.of() : List.copyOf(volumeMounts);
    }
}
