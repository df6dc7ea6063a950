package io.agentenv.volumes.storage;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
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
    public Usage usage(String volumeId) throws IOException {
        FileStore store = Files.getFileStore(content(volumeId));
        return new Usage(store.getTotalSpace() - store.getUnallocatedSpace(), store.getTotalSpace());
    }

    @Override
    public void delete(String volumeId) throws IOException {
        Path home = home(volumeId);
        if (!Files.exists(home)) {
            return;
        }
        Files.walkFileTree(
                home,
                new SimpleFileVisitor<>() { // does not follow symlinks
                    @Override
                    public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                        Files.delete(file);
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                        if (e != null) {
                            throw e;
                        }
                        Files.delete(d);
                        return FileVisitResult.CONTINUE;
                    }
                });
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
