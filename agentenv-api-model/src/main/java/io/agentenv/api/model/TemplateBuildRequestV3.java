package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * E2B schema {@code TemplateBuildRequestV3} ({@code POST /v3/templates}). {@code name} may carry a tag after a colon;
 * {@code alias} is its deprecated spelling. {@code teamID} is ignored (deployments are single-tenant).
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record TemplateBuildRequestV3(
        String name, String alias, List<String> tags, Integer cpuCount, Integer memoryMB, Integer minFreeDiskMb) {
    public TemplateBuildRequestV3 {
        tags = tags == null ? List.of() : List.copyOf(tags);
        if (cpuCount != null && (cpuCount < 1 || cpuCount > 64)) {
            throw new IllegalArgumentException("cpuCount must be 1..64");
        }
        if (memoryMB != null && (memoryMB < 128 || memoryMB > 262_144)) {
            throw new IllegalArgumentException("memoryMB must be 128..262144");
        }
    }
}
