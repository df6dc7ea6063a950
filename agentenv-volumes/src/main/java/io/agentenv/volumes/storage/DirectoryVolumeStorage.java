package io.agentenv.volumes.storage;

import static java.util.Objects.requireNonNull;

import io.agentenv.volumes.FileTrees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * Volumes as plain directories {@code <dir>/<id>/content}: no size limit is enforced (usage reports the file system's).
 * Two uses: a development host without root (the files keep the server's own uid), and a cluster's shared volume
 * directory, which every node mounts (NFS, CephFS, ...): there the content root belongs to the given owner (the
 * sandboxes' default user as the host sees it), as a loop volume's does.
 */
public final class DirectoryVolumeStorage implements VolumeStorage {
    private final Path dir;
    private final Optional<Owner> owner;

    /** The owner of a content root: host uid and gid. */
    public record Owner(int uid, int gid) {}

    /** Directories that keep the server's own uid. */
    public DirectoryVolumeStorage(Path dir) {
        this(dir, Optional.empty());
    }

    /** Directories whose content roots belong to {@code owner} (needs root). */
    public DirectoryVolumeStorage(Path dir, Optional<Owner> owner) {
        this.dir = requireNonNull(dir, "dir is null");
        this.owner = requireNonNull(owner, "owner is null");
    }

    @Override
    public Path create(String volumeId, int sizeMiB) throws IOException {
        Path home = home(volumeId);
        Files.createDirectories(dir);
        Files.createDirectory(home);
        Path content = Files.createDirectory(home.resolve(LoopVolumeStorage.CONTENT));
        if (owner.isPresent()) {
            Files.setAttribute(content, "unix:uid", owner.get().uid(), LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(content, "unix:gid", owner.get().gid(), LinkOption.NOFOLLOW_LINKS);
        }
        return content;
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
