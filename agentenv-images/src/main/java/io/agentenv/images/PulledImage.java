package io.agentenv.images;

import java.nio.file.Path;
import java.util.Objects;

/**
 * An image in the store, unpacked.
 *
 * @param ref the reference it was pulled as (for {@link ImageStore#list()}: as it was first pulled)
 * @param manifestDigest the registry's digest of the linux/amd64 image manifest ({@code sha256:...}); the cache key
 * @param config the process settings of its image config
 * @param rootfs its root filesystem, unpacked: shared by every pull of this digest, so read-only by convention
 *     (use it as an overlay's lower directory or copy it; never write into it)
 * @param sizeBytes the apparent size of the files in {@code rootfs}
 */
public record PulledImage(ImageRef ref, String manifestDigest, ImageConfig config, Path rootfs, long sizeBytes) {

    public PulledImage {
        Objects.requireNonNull(ref, "ref");
        Objects.requireNonNull(manifestDigest, "manifestDigest");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(rootfs, "rootfs");
    }
}
