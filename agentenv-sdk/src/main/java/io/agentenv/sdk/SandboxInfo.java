package io.agentenv.sdk;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What the control plane knows about a sandbox ({@link Sandbox#getInfo()}, {@link Sandbox#list}).
 *
 * @param sandboxId           its id
 * @param templateId          the template (or snapshot) it was created from
 * @param name                the template's alias, if any
 * @param metadata            the metadata it was created with
 * @param startedAt           when it started
 * @param endAt               when its timeout passes
 * @param state               running or paused
 * @param cpuCount            its CPUs
 * @param memoryMB            its memory in MiB
 * @param diskSizeMB          its disk in MiB (0 when not reported)
 * @param envdVersion         the version of envd inside
 * @param allowInternetAccess whether it may reach the internet (empty: not reported or the default)
 * @param allowOut            its allowed egress destinations (from {@code network}; empty when none)
 * @param denyOut             its denied egress destinations
 * @param lifecycle           what happens on timeout (empty: not reported)
 */
public record SandboxInfo(
        String sandboxId,
        String templateId,
        Optional<String> name,
        Map<String, String> metadata,
        Instant startedAt,
        Instant endAt,
        SandboxState state,
        int cpuCount,
        int memoryMB,
        int diskSizeMB,
        String envdVersion,
        Optional<Boolean> allowInternetAccess,
        List<String> allowOut,
        List<String> denyOut,
        Optional<Lifecycle> lifecycle) {
    /** Checks the fields and copies the collections. */
    public SandboxInfo {
        Objects.requireNonNull(sandboxId, "sandboxId");
        Objects.requireNonNull(templateId, "templateId");
        Objects.requireNonNull(name, "name");
        metadata = Map.copyOf(metadata);
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(allowInternetAccess, "allowInternetAccess");
        allowOut = List.copyOf(allowOut);
        denyOut = List.copyOf(denyOut);
        Objects.requireNonNull(lifecycle, "lifecycle");
    }
}
