package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a backend needs to bring one sandbox up: its identity, what the guest agent is initialised with, and the policy
 * to enforce.
 *
 * @param id            the sandbox's id; backends label every host resource with it
 * @param template      the template or snapshot it comes from (informational for Paused sources)
 * @param envVars       default environment of every process started in the sandbox
 * @param defaultUser   the user processes run as when a request does not name one
 * @param accessToken   the token the guest agent requires on every request (X-Access-Token)
 * @param network       the egress/ingress policy to enforce
 * @param defaultWorkdir the working directory of processes when a request names none; empty: the default user's home
 * @param volumeMounts  the volumes the sandbox mounts, at paths that do not overlap each other
 */
public record LaunchSpec(
        SandboxId id,
        TemplateId template,
        Map<String, String> envVars,
        String defaultUser,
        AccessToken accessToken,
        NetworkPolicy network,
        Optional<String> defaultWorkdir,
        List<VolumeMount> volumeMounts) {
    public LaunchSpec {
        requireNonNull(id, "id is null");
        requireNonNull(template, "template is null");
        envVars = Map.copyOf(envVars);
        requireNonNull(defaultUser, "defaultUser is null");
        requireNonNull(accessToken, "accessToken is null");
        requireNonNull(network, "network is null");
        requireNonNull(defaultWorkdir, "defaultWorkdir is null");
        volumeMounts = List.copyOf(volumeMounts);
        for (int i = 0; i < volumeMounts.size(); i++) {
            for (int j = i + 1; j < volumeMounts.size(); j++) {
                if (volumeMounts.get(i).overlaps(volumeMounts.get(j).guestPath())) {
                    throw new IllegalArgumentException(
                            "volume mounts overlap: " + volumeMounts.get(i).guestPath() + " and "
                                    + volumeMounts.get(j).guestPath());
                }
            }
        }
    }

    /** A launch that mounts no volume. */
    public LaunchSpec(
            SandboxId id,
            TemplateId template,
            Map<String, String> envVars,
            String defaultUser,
            AccessToken accessToken,
            NetworkPolicy network,
            Optional<String> defaultWorkdir) {
        this(id, template, envVars, defaultUser, accessToken, network, defaultWorkdir, List.of());
    }

    /** A launch whose processes start in the default user's home. */
    public LaunchSpec(
            SandboxId id,
            TemplateId template,
            Map<String, String> envVars,
            String defaultUser,
            AccessToken accessToken,
            NetworkPolicy network) {
        this(id, template, envVars, defaultUser, accessToken, network, Optional.empty());
    }
}
