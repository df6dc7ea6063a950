package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.VolumeMount;

/**
 * A volume as a sandbox (or a snapshot, for the sandboxes created from it) mounts it, kept in its record: which volume
 * (its id, and its name as E2B's {@code SandboxVolumeMount} reports it), where, and whether read-only. Every launch of
 * the sandbox (create, resume, restart, fork child, a create from its snapshot) mounts the same volumes.
 *
 * @param volumeId the volume's id
 * @param name     the volume's name
 * @param path     where it appears in the sandbox: absolute and normalized (see {@link VolumeMount#isNormalizedAbsolute})
 * @param readOnly whether the sandbox may only read it
 */
public record VolumeAttachment(String volumeId, String name, String path, boolean readOnly) {
    public VolumeAttachment {
        requireNonNull(volumeId, "volumeId is null");
        requireNonNull(name, "name is null");
        requireNonNull(path, "path is null");
        if (!VolumeMount.isNormalizedAbsolute(path)) {
            throw new IllegalArgumentException("a volume's mount path must be absolute and normalized: " + path);
        }
    }
}
