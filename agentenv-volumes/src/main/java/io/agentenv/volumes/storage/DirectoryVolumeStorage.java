package io.agentenv.volumes.storage;

import static java.util.Objects.requireNonNull;

import io.agentenv.volumes.FileTrees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Volumes as plain directories {@code <dir>/<id>/content}, for development hosts without root: no size limit is
 * enforced (usage reports the host file system's) and the files keep the server's own uid.
 */
public final class DirectoryVolumeStorage implements VolumeStorage {
    private final Path dir;

    public DirectoryVolumeStorage(Path dir) {
        this.dir = requireNonNull(dir, "dir is null");
    }

    @Override
    public Path create(String volumeId, int sizeMiB) throws IOException {
        Path home = home(volumeId);
        Files.createDirectories(dir);
        Files.createDirectory(home);
        return Files.createDirectory(home.resolve(LoopVolumeStorage.CONTENT));
    }

    @Override
    public Path content(String volumeId) {
        return home(volumeId).resolve(LoopVolumeStorage.CONTENT);
    }

    @Override
    public void delete(String volumeId) throws IOException {
        Path home = home(volumeId);
        if (!Files.exists(home)) {
            return;
        }
        FileTrees.deleteTree(home);
    }

    @Override
    public void mountAll(Map<String, Integer> volumes) {
        // plain directories are always there
    }

    private Path home(String volumeId) {
        requireNonNull(volumeId, "volumeId is null");
        if (!volumeId.matches("[a-z0-9]{1,64}")) {
            throw new IllegalArgumentException("bad volume id");
        }
        return dir.resolve(volumeId);
    }
}
