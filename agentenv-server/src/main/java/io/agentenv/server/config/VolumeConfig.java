package io.agentenv.server.config;

import static java.util.Objects.requireNonNull;

/**
 * The operator's volume settings.
 *
 * @param defaultSizeMiB size of a volume created without one ({@code AENV_VOLUME_DEFAULT_MB}, default 1024)
 * @param maxSizeMiB     largest volume size ({@code AENV_VOLUME_MAX_MB}, default 10240)
 * @param storage        where volumes are kept ({@code AENV_VOLUME_STORAGE}): {@code loop} (default: each volume an
 *                       ext4 image loop-mounted under {@code <AENV_HOME>/volumes}, needs root; the size is enforced)
 *                       or {@code directory} (plain directories, for development hosts without root; no size limit)
 */
public record VolumeConfig(int defaultSizeMiB, int maxSizeMiB, Storage storage) {
    /** The volume storage implementations the server can use. */
    public enum Storage {
        LOOP,
        DIRECTORY
    }

    public VolumeConfig {
        requireNonNull(storage, "storage is null");
        if (defaultSizeMiB < 1) {
            throw new IllegalArgumentException(ServerConfig.VOLUME_DEFAULT_MB + " must be >= 1: " + defaultSizeMiB);
        }
        if (maxSizeMiB < defaultSizeMiB) {
            throw new IllegalArgumentException(ServerConfig.VOLUME_MAX_MB + " (" + maxSizeMiB + ") must be >= "
                    + ServerConfig.VOLUME_DEFAULT_MB + " (" + defaultSizeMiB + ")");
        }
    }

    static Storage parseStorage(String value) {
        return switch (value) {
            case "loop" -> Storage.LOOP;
            case "directory" -> Storage.DIRECTORY;
            default ->
                throw new IllegalArgumentException(
                        ServerConfig.VOLUME_STORAGE + " must be 'loop' or 'directory': " + value);
        };
    }
}
