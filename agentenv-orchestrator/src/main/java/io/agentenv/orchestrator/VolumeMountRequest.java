package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

/**
 * A volume a create asks to mount, as the request names it (checked and resolved by the orchestrator).
 *
 * @param volume   the volume's name or id
 * @param path     where the sandbox should see it
 * @param readOnly whether the sandbox may only read it
 */
public record VolumeMountRequest(String volume, String path, boolean readOnly) {
    public VolumeMountRequest {
        requireNonNull(volume, "volume is null");
        requireNonNull(path, "path is null");
    }
}
