package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A catalog entry: a captured snapshot sandboxes can be created from.
 *
 * @param aliases        names bound to it (an alias is unique across the catalog)
 * @param sourceSandbox  the sandbox it was captured from
 * @param sourceTemplate the template that sandbox was launched from
 * @param envVars        the source's default environment, inherited by sandboxes created from it
 * @param customExtensionParams the source's custom extension params (raw JSON object), inherited by sandboxes created
 *                              from it unless the create names its own
 * @param guestDefaults  the default user and working directory of sandboxes created from it
 * @param volumes        the volumes its source mounted: sandboxes created from it mount the same ones (their content
 *                       is not part of the snapshot)
 */
public record SnapshotRecord(
        TemplateId id,
        List<String> aliases,
        Optional<SandboxId> sourceSandbox,
        TemplateId sourceTemplate,
        Map<String, String> envVars,
        Resources resources,
        StoredState state,
        Instant createdAt,
        Instant updatedAt,
        String customExtensionParams,
        GuestDefaults guestDefaults,
        List<VolumeAttachment> volumes) {
    public SnapshotRecord {
        requireNonNull(id, "id is null");
        aliases = List.copyOf(aliases);
        requireNonNull(sourceSandbox, "sourceSandbox is null");
        requireNonNull(sourceTemplate, "sourceTemplate is null");
        envVars = Map.copyOf(envVars);
        requireNonNull(resources, "resources is null");
        requireNonNull(state, "state is null");
        requireNonNull(createdAt, "createdAt is null");
        requireNonNull(updatedAt, "updatedAt is null");
        requireNonNull(customExtensionParams, "customExtensionParams is null");
        requireNonNull(guestDefaults, "guestDefaults is null");
        volumes = List.copyOf(volumes);
    }

    public SnapshotRecord withSource(SandboxId sandbox) {
        return new SnapshotRecord(
                id,
                aliases,
                Optional.of(sandbox),
                sourceTemplate,
                envVars,
                resources,
                state,
                createdAt,
                updatedAt,
                customExtensionParams,
                guestDefaults,
                volumes);
    }

    public SnapshotView view() {
        return new SnapshotView(id, aliases, sourceSandbox, resources, createdAt, updatedAt);
    }
}
