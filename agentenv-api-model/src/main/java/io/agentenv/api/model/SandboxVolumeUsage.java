package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

/**
 * This server's own item of {@link SandboxMetric#volumes()}: a volume the sandbox mounts, where, and its bytes used and
 * capacity (every sandbox that mounts the volume sees the same figures).
 */
public record SandboxVolumeUsage(String name, String path, long usedBytes, long totalBytes) {
    public SandboxVolumeUsage {
        requireNonNull(name, "name is null");
        requireNonNull(path, "path is null");
    }
}
