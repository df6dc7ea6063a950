package io.agentenv.server.config;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.util.Optional;

/**
 * The operator's volume settings.
 *
 * @param defaultSizeMiB size of a volume created without one ({@code AENV_VOLUME_DEFAULT_MB}, default 1024)
 * @param maxSizeMiB     largest volume size ({@code AENV_VOLUME_MAX_MB}, default 10240)
 * @param storage        where volumes are kept ({@code AENV_VOLUME_STORAGE}): {@code loop} (default: each volume an
 *                       ext4 image loop-mounted under {@code <AENV_HOME>/volumes}, needs root; the size is enforced)
 *                       or {@code directory} (plain directories, for development hosts without root; no size limit)
 * @param sharedDir      where the volumes of a cluster are kept ({@code AENV_VOLUME_SHARED_DIR}): a directory every
 *                       node mounts at the same path (NFS, CephFS, ...), so that every node sees every volume; needs
 *                       {@code directory} storage (a loop-mounted image must never be mounted by two machines). Empty:
 *                       {@code <AENV_HOME>/volumes}, this server's own
 */
public record VolumeConfig(int defaultSizeMiB, int maxSizeMiB, Storage storage, Optional<Path> sharedDir) {
    /** The volume storage implementations the server can use. */
    public enum Storage {
        LOOP,
        DIRECTORY
    }

    public VolumeConfig {
        requireNonNull(storage, "storage is null");
        requireNonNull(sharedDir, "sharedDir is null");
        if (sharedDir.isPresent() && !sharedDir.get().isAbsolute()) {
            throw new IllegalArgumentException(
                    ServerConfig.VOLUME_SHARED_DIR + " must be absolute: " + sharedDir.get());
        }
        if (sharedDir.isPresent() && storage != Storage.DIRECTORY) {
            throw new IllegalArgumentException(ServerConfig.VOLUME_SHARED_DIR + " needs " + ServerConfig.VOLUME_STORAGE
                    + "=directory: a loop-mounted volume image must never be mounted by two machines");
        }
        if (defaultSizeMiB < 1) {
            throw new IllegalArgumentException(ServerConfig.VOLUME_DEFAULT_MB + " must be >= 1: " + defaultSizeMiB);
        }
        if (maxSizeMiB < defaultSizeMiB) {
            throw new IllegalArgumentException(ServerConfig.VOLUME_MAX_MB + " (" + maxSizeMiB + ") must be >= "
                    + ServerConfig.VOLUME_DEFAULT_MB + " (" + defaultSizeMiB + ")");
        }
    }

    /** A server's own volumes ({@code <AENV_HOME>/volumes}). */
    public VolumeConfig(int defaultSizeMiB, int maxSizeMiB, Storage storage) {
        this(defaultSizeMiB, maxSizeMiB, storage, Optional.empty());
    }

    /** Whether the volumes are in a directory every node of the cluster mounts. */
    public boolean shared() {
        return sharedDir.isPresent();
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
