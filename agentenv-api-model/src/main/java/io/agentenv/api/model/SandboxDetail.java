package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * {@code GET /sandboxes/{id}} (E2B schema {@code SandboxDetail}). {@code allowInternetAccess} is camelCase here
 * (snake_case in requests) and always present, null meaning the default; {@code network} is present only when the
 * sandbox has explicit rules, private ingress or a Host mask ({@code maskRequestHost}). {@code lifecycle} is optional in E2B's schema (this server always
 * sends it); absent metadata reads as empty.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SandboxDetail(
        @JsonProperty("templateID") String templateID,
        String alias,
        @JsonProperty("sandboxID") String sandboxID,
        @JsonProperty("clientID") String clientID,
        Instant startedAt,
        Instant endAt,
        String envdVersion,
        String envdAccessToken,
        @JsonInclude(JsonInclude.Include.ALWAYS) String domain,
        int cpuCount,
        @JsonProperty("memoryMB") int memoryMB,
        @JsonProperty("diskSizeMB") int diskSizeMB,
        Map<String, String> metadata,
        SandboxState state,
        @JsonInclude(JsonInclude.Include.ALWAYS) Boolean allowInternetAccess,
        SandboxNetworkConfig network,
        SandboxLifecycle lifecycle,
        List<SandboxVolumeMount> volumeMounts) {

    public SandboxDetail {
        requireNonNull(templateID, "templateID is null");
        requireNonNull(sandboxID, "sandboxID is null");
        requireNonNull(clientID, "clientID is null");
        requireNonNull(startedAt, "startedAt is null");
        requireNonNull(endAt, "endAt is null");
        requireNonNull(envdVersion, "envdVersion is null");
        requireNonNull(state, "state is null");
        metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
        volumeMounts = volumeMounts == null ? List.of() : List.copyOf(volumeMounts);
    }

    @Override
    public String toString() {
        return "SandboxDetail[sandboxID=" + sandboxID + ", state=" + state + ", envdAccessToken=<redacted>]";
    }
}
