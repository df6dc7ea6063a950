package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.EnvdTokens;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.VolumeMount;
import java.util.List;

/**
 * The backend's {@link LaunchSpec} for a record: its id, template, environment and network, the default user and
 * working directory (its template's, else the server's user in that user's home), the envd token derived for the id
 * (never stored) and its volumes with their host directories. Create, fork children, resume and recovery launch from it.
 */
final class LaunchSpecs {
    private final EnvdTokens tokens;
    private final String defaultUser;
    private final VolumeCatalog volumes;

    LaunchSpecs(EnvdTokens tokens, String defaultUser, VolumeCatalog volumes) {
        this.tokens = requireNonNull(tokens, "tokens is null");
        this.defaultUser = requireNonNull(defaultUser, "defaultUser is null");
        this.volumes = requireNonNull(volumes, "volumes is null");
    }

    LaunchSpec of(SandboxRecord record) {
        List<VolumeMount> mounts = record.volumes().stream()
                .map(v -> new VolumeMount(v.volumeId(), volumes.contentDir(v.volumeId()), v.path(), v.readOnly()))
                .toList();
        return new LaunchSpec(
                record.id(),
                record.template(),
                record.envVars(),
                record.guestDefaults().user().orElse(defaultUser),
                tokens.envdToken(record.id()),
                record.network(),
                record.guestDefaults().workdir(),
                mounts);
    }
}
