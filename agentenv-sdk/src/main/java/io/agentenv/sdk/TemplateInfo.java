package io.agentenv.sdk;

import java.util.List;
import java.util.Objects;

/**
 * A template sandboxes are created from ({@link Templates}).
 *
 * @param templateId  its id
 * @param names       its names (aliases), possibly empty
 * @param cpuCount    CPUs of its sandboxes
 * @param memoryMB    memory of its sandboxes in MiB
 * @param diskSizeMB  disk of its sandboxes in MiB
 * @param isPublic    whether it is public
 * @param envdVersion the envd version inside
 * @param buildStatus the state of its build (e.g. {@code ready})
 */
public record TemplateInfo(
        String templateId,
        List<String> names,
        int cpuCount,
        int memoryMB,
        int diskSizeMB,
        boolean isPublic,
        String envdVersion,
        String buildStatus) {
    /** Checks the fields. */
    public TemplateInfo {
        Objects.requireNonNull(templateId, "templateId");
        names = List.copyOf(names);
        Objects.requireNonNull(envdVersion, "envdVersion");
        Objects.requireNonNull(buildStatus, "buildStatus");
    }
}
