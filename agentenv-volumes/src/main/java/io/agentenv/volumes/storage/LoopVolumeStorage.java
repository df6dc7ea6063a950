package io.agentenv.volumes.storage;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Volumes on this host's disk: {@code <dir>/<id>/volume.img}, a sparse file of the volume's size formatted as ext4
 * (as sandbox disks are: no journal, no reserved blocks, lazy inode tables), loop-mounted with {@code mount -o loop}
 * (nosuid, nodev) at {@code <dir>/<id>/content}. The file system is the size limit: a write past it fails with ENOSPC.
 * The content root belongs to the configured owner (the sandboxes' default user as the host sees it). {@code mount -o
 * loop} sets the loop device to clear itself, so {@code umount} leaves no loop device behind. Needs root.
 */
public final class LoopVolumeStorage implements VolumeStorage {
    private static final Logger log = LoggerFactory.getLogger(LoopVolumeStorage.class);
    static final String IMAGE = "volume.img";
    static final String CONTENT = "content";

    private final Path dir;
    private final int ownerUid;
    private final int ownerGid;
    /** The volumes mounted by this process (at create or start): the only ones whose content may be used. */
    private final Set<String> mounted = ConcurrentHashMap.newKeySet();

    public LoopVolumeStorage(Path dir, int ownerUid, int ownerGid) {
        this.dir = requireNonNull(dir, "dir is null");
        this.ownerUid = ownerUid;
        this.ownerGid = ownerGid;
    }

    /** Why loop-mounted volumes cannot be made here (not root, no loop devices, no mkfs.ext4), or empty. */
    public static Optional<String> hostUnavailableReason() {
        OptionalInt uid = effectiveUid();
        if (uid.isEmpty() || uid.getAsInt() != 0) {
            return Optional.of("volumes need root for loop mounts (the server runs as uid "
                    + (uid.isPresent() ? String.valueOf(uid.getAsInt()) : "unknown") + ")");
        }
        if (!Files.exists(Path.of("/dev/loop-control"))) {
            return Optional.of("no loop devices (/dev/loop-control is missing)");
        }
        for (String bin : List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin")) {
            if (Files.isExecutable(Path.of(bin, "mkfs.ext4"))) {
                return Optional.empty();
            }
        }
        return Optional.of("mkfs.ext4 is not installed (Debian package e2fsprogs)");
    }

    /** The process's effective uid, from {@code /proc/self/status}. */
    private static OptionalInt effectiveUid() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) {
                    String[] ids = line.substring(4).trim().split("\\s+");
                    return ids.length > 1 ? OptionalInt.of(Integer.parseInt(ids[1])) : OptionalInt.empty();
                }
            }
        } catch (IOException | NumberFormatException e) {
            log.atDebug().setCause(e).log("reading the effective uid failed");
        }
        return OptionalInt.empty();
    }

    @Override
    public Optional<String> unavailableReason() {
        return hostUnavailableReason();
    }

    @Override
    public Path create(String volumeId, int sizeMiB) throws IOException {
        Path home = home(volumeId);
        Files.createDirectories(dir);
        Files.createDirectory(home, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
        try {
            Path image = home.resolve(IMAGE);
            format(image, sizeMiB);
            Path content = Files.createDirectory(home.resolve(CONTENT));
            mount(image, content);
            Files.deleteIfExists(content.resolve("lost+found")); // an empty volume lists nothing
            Files.setAttribute(content, "unix:uid", ownerUid, LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(content, "unix:gid", ownerGid, LinkOption.NOFOLLOW_LINKS);
            Files.setPosixFilePermissions(content, PosixFilePermissions.fromString("rwxr-xr-x"));
            mounted.add(volumeId);
            return content;
        } catch (IOException | RuntimeException e) {
            try {
                delete(volumeId);
            } catch (IOException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    /** A sparse file of {@code sizeMiB} formatted as ext4, as {@code SandboxDisks.format} makes sandbox disks. */
    static void format(Path image, int sizeMiB) throws IOException {
        try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
            file.setLength((long) sizeMiB << 20); // sparse: no block is written
        }
        HostCommands.run(List.of(
                "mkfs.ext4",
                "-q",
                "-F",
                "-m",
                "0",
                "-O",
                "^has_journal",
                "-E",
                "lazy_itable_init=1,nodiscard",
                "-L",
                "aenv-volume",
                image.toString()));
    }

    private static void mount(Path image, Path content) throws IOException {
        HostCommands.run(List.of(
                "mount", "-t", "ext4", "-o", "loop,nosuid,nodev,noatime", image.toString(), content.toString()));
    }

    @Override
    public Path content(String volumeId) throws IOException {
        Path content = home(volumeId).resolve(CONTENT);
        if (!mounted.contains(volumeId)) {
            throw new IOException("volume " + volumeId + " is not mounted on this host");
        }
        return content;
    }

    @Override
    public void delete(String volumeId) throws IOException {
        Path home = home(volumeId);
        Path content = home.resolve(CONTENT);
        if (MountTable.isMountPoint(content)) {
            HostCommands.run(List.of("umount", content.toString())); // fails while the volume is busy: kept whole
        }
        mounted.remove(volumeId);
        Files.deleteIfExists(content);
        Files.deleteIfExists(home.resolve(IMAGE));
        Files.deleteIfExists(home);
    }

    @Override
    public void mountAll(Map<String, Integer> volumes) throws IOException {
        List<String> failed = new ArrayList<>();
        for (String id : volumes.keySet()) {
            Path content = home(id).resolve(CONTENT);
            Path image = home(id).resolve(IMAGE);
            if (!Files.isRegularFile(image, LinkOption.NOFOLLOW_LINKS)) {
                log.atWarn().addKeyValue("volume_id", id).log("a registered volume has no image");
                failed.add(id);
                continue;
            }
            try {
                if (!MountTable.isMountPoint(content)) {
                    Files.createDirectories(content);
                    mount(image, content);
                }
                mounted.add(id);
            } catch (IOException e) {
                log.atWarn().addKeyValue("volume_id", id).setCause(e).log("mounting a volume failed");
                failed.add(id);
            }
        }
        if (!failed.isEmpty()) {
            throw new IOException("volumes not mounted: " + String.join(", ", failed));
        }
    }

    private Path home(String volumeId) {
        requireNonNull(volumeId, "volumeId is null");
        if (!volumeId.matches("[a-z0-9]{1,64}")) {
            throw new IllegalArgumentException("bad volume id");
        }
        return dir.resolve(volumeId);
    }
}
