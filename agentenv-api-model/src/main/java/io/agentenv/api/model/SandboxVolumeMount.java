package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * E2B schema {@code SandboxVolumeMount}: a volume a sandbox mounts, by {@code name} (this server also takes the volume's
 * id there), at {@code path}. {@code readOnly} is this server's own optional field (absent: read-write); answers carry
 * it only for a read-only mount.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record SandboxVolumeMount(
        String name,
        String path,
        @JsonInclude(JsonInclude.Include.NON_NULL) Boolean readOnly) {
    public SandboxVolumeMount {
        WireChecks.requireText(name, "volumeMounts[].name");
        WireChecks.requireText(path, "volumeMounts[].path");
    }

    public boolean readOnlyOrDefault() {
        return readOnly != null && readOnly;
    }
}
