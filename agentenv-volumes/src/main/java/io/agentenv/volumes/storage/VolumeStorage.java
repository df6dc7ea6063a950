package io.agentenv.volumes.storage;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * Where volumes' bytes live: the seam between the registry and the host. The local implementation keeps each volume
 * as a loop-mounted ext4 image ({@link LoopVolumeStorage}); a multi-node deployment implements it over shared storage
 * (a network file system or a block device every node can attach), so that any node sees the same content directory.
 */
public interface VolumeStorage {
    /** Makes a new, empty volume of {@code sizeMiB} and returns its content directory, mounted and ready. */
    Path create(String volumeId, int sizeMiB) throws IOException;

    /**
     * The host directory that holds the volume's content (its root), as mounted on this host; an IOException when it
     * is not mounted here (its mount at start failed), so nothing is written beside the volume instead of into it.
     */
    Path content(String volumeId) throws IOException;

    /** Bytes used and the volume's capacity: what the filesystem holding its content directory says. */
    default Usage usage(String volumeId) throws IOException {
        FileStore store = Files.getFileStore(content(volumeId));
        return new Usage(store.getTotalSpace() - store.getUnallocatedSpace(), store.getTotalSpace());
    }

    /** Unmounts the volume and removes everything it had on this host. Deleting an absent volume does nothing. */
    void delete(String volumeId) throws IOException;

    /** At server start: mounts again every volume the registry knows ({@code volumeId -> sizeMiB}) that is not. */
    void mountAll(Map<String, Integer> volumes) throws IOException;

    /** Why this host cannot keep volumes, or empty when it can. */
    default Optional<String> unavailableReason() {
        return Optional.empty();
    }

    /** What a volume uses of its capacity, in bytes. */
    record Usage(long usedBytes, long totalBytes) {}
}
