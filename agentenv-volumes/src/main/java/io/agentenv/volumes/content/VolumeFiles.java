package io.agentenv.volumes.content;

import static java.util.Objects.requireNonNull;

import io.agentenv.volumes.FileTrees;
import io.agentenv.volumes.VolumeException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The file operations of the volume content API on one volume's root: list, stat, make a directory, write (atomic),
 * read, rename, change owner and mode, remove. Paths never leave the root ({@link ConfinedPaths}). Entries made here
 * belong to the guest default user unless the request names other guest ids; permission bits are limited to
 * {@code 0777} and the sticky bit. Errors are {@link VolumeException}s; a full volume is {@code NO_SPACE}.
 */
public final class VolumeFiles {
    /** Permission bits a client may set: rwx for all and the sticky bit (set-id bits are dropped). */
    static final int MODE_MASK = 01777;

    static final int DEFAULT_FILE_MODE = 0644;
    static final int DEFAULT_DIR_MODE = 0755;
    static final int MAX_DEPTH = 32;
    static final int MAX_ENTRIES = 100_000;
    private static final String TEMP_PREFIX = ".aenv-write-";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final ConfinedPaths paths;
    private final GuestOwner owner;

    public VolumeFiles(Path root, GuestOwner owner) {
        this.paths = new ConfinedPaths(root);
        this.owner = requireNonNull(owner, "owner is null");
    }

    /** Ownership and mode a request asks for; empty fields keep the defaults (or, on update, what is there). */
    public record Metadata(OptionalInt uid, OptionalInt gid, OptionalInt mode) {
        public static final Metadata NONE = new Metadata(OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty());
    }

    public EntryStat stat(VolumePath path) {
        return io(() -> stat(paths.locate(path), path));
    }

    /** The entries below the directory {@code path}, {@code depth} levels deep (1: its children). */
    public List<EntryStat> list(VolumePath path, int depth) {
        if (depth < 1 || depth > MAX_DEPTH) {
            throw VolumeException.invalid("depth must be from 1 to " + MAX_DEPTH);
        }
        return io(() -> {
            Path dir = paths.locate(path);
            BasicFileAttributes attrs = existing(dir, path);
            if (!attrs.isDirectory()) {
                throw VolumeException.invalid("path " + path + " is not a directory");
            }
            List<EntryStat> found = new ArrayList<>();
            collect(dir, path, depth, found);
            return found;
        });
    }

    private void collect(Path dir, VolumePath path, int depth, List<EntryStat> found) throws IOException {
        List<Path> children = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            entries.forEach(children::add);
        }
        children.sort(null);
        for (Path child : children) {
            String name = child.getFileName().toString();
            if (name.startsWith(TEMP_PREFIX)) {
                continue; // a write in progress (or one a crash left behind)
            }
            if (found.size() >= MAX_ENTRIES) {
                throw VolumeException.invalid("directory listing is larger than " + MAX_ENTRIES + " entries");
            }
            VolumePath childPath = path.child(name);
            Optional<EntryStat> stat = maybeStat(child, childPath);
            if (stat.isEmpty()) {
                continue; // removed while listing
            }
            found.add(stat.get());
            if (depth > 1 && stat.get().type() == EntryStat.Type.DIRECTORY) {
                collect(child, childPath, depth - 1, found);
            }
        }
    }

    /** Makes the directory {@code path}; {@code parents} also makes missing parents and accepts an existing one. */
    public EntryStat makeDir(VolumePath path, boolean parents, Metadata metadata) {
        if (path.isRoot()) {
            throw VolumeException.conflict("the volume's root exists");
        }
        return io(() -> {
            if (parents) {
                makeParents(path);
            }
            Path dir = paths.locate(path);
            Optional<BasicFileAttributes> there = ConfinedPaths.attributes(dir);
            if (there.isPresent()) {
                if (parents && there.get().isDirectory()) {
                    return stat(dir, path);
                }
                throw VolumeException.conflict("path " + path + " already exists");
            }
            requireParent(dir, path);
            try {
                Files.createDirectory(dir);
            } catch (FileAlreadyExistsException e) {
                throw VolumeException.conflict("path " + path + " already exists");
            }
            own(dir, metadata, DEFAULT_DIR_MODE);
            return stat(dir, path);
        });
    }

    /**
     * Writes {@code content} to the file {@code path} atomically: into a new file in the same directory, flushed to
     * disk, then renamed over the old one; a crash leaves the old content or the new, never a mix. Missing parent
     * directories are made. An existing directory at {@code path} is a conflict.
     */
    public EntryStat write(VolumePath path, InputStream content, Metadata metadata) {
        requireNonNull(content, "content is null");
        if (path.isRoot()) {
            throw VolumeException.invalid("cannot write to the volume's root");
        }
        return io(() -> {
            makeParents(path.parent());
            Path target = paths.locate(path);
            Optional<BasicFileAttributes> there = ConfinedPaths.attributes(target);
            if (there.isPresent() && there.get().isDirectory()) {
                throw VolumeException.conflict("path " + path + " is a directory");
            }
            Path temp = target.resolveSibling(TEMP_PREFIX + HexFormat.of().toHexDigits(RANDOM.nextLong()));
            try {
                try (FileChannel out = FileChannel.open(
                        temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
                    copy(content, out);
                    out.force(true);
                }
                own(temp, metadata, DEFAULT_FILE_MODE);
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                syncDirectory(target.getParent());
            } catch (IOException | RuntimeException e) {
                Files.deleteIfExists(temp);
                throw e;
            }
            return stat(target, path);
        });
    }

    private static void copy(InputStream in, FileChannel out) throws IOException {
        byte[] buffer = new byte[64 * 1024];
        int n;
        while ((n = in.read(buffer)) > 0) {
            ByteBuffer chunk = ByteBuffer.wrap(buffer, 0, n);
            while (chunk.hasRemaining()) {
                out.write(chunk);
            }
        }
    }

    /** An open regular file for reading, and its size; the caller closes the channel. */
    public record OpenFile(FileChannel channel, long size) {}

    /** Opens the regular file {@code path} for reading (a link, directory or device is refused). */
    public OpenFile read(VolumePath path) {
        return io(() -> {
            Path file = paths.locate(path);
            BasicFileAttributes attrs = existing(file, path);
            if (!attrs.isRegularFile()) {
                throw VolumeException.invalid("path " + path + " is not a regular file");
            }
            FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
            return new OpenFile(channel, channel.size());
        });
    }

    /**
     * Renames {@code from} to {@code to} (a move within the volume; a link moves as a link). An existing {@code to}
     * is a conflict unless {@code overwrite}, which replaces a file or an empty directory.
     */
    public EntryStat rename(VolumePath from, VolumePath to, boolean overwrite) {
        if (from.isRoot() || to.isRoot()) {
            throw VolumeException.invalid("the volume's root cannot be renamed or replaced");
        }
        if (from.contains(to) && !from.equals(to)) {
            throw VolumeException.invalid("cannot move " + from + " into itself");
        }
        return io(() -> {
            Path source = paths.locate(from);
            existing(source, from);
            Path target = paths.locate(to);
            requireParent(target, to);
            if (ConfinedPaths.attributes(target).isPresent() && !overwrite) {
                throw VolumeException.conflict("path " + to + " already exists");
            }
            try {
                Files.move(source, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (DirectoryNotEmptyException e) {
                throw VolumeException.conflict("path " + to + " is a directory that is not empty");
            }
            syncDirectory(target.getParent());
            return stat(target, to);
        });
    }

    /** Changes the owner (guest ids) and mode of {@code path}; a link's mode cannot change. */
    public EntryStat update(VolumePath path, Metadata metadata) {
        return io(() -> {
            Path entry = paths.locate(path);
            BasicFileAttributes attrs = existing(entry, path);
            if (owner.chown() && (metadata.uid().isPresent() || metadata.gid().isPresent())) {
                if (metadata.uid().isPresent()) {
                    Files.setAttribute(
                            entry, "unix:uid", owner.toHost(metadata.uid().getAsInt()), LinkOption.NOFOLLOW_LINKS);
                }
                if (metadata.gid().isPresent()) {
                    Files.setAttribute(
                            entry, "unix:gid", owner.toHost(metadata.gid().getAsInt()), LinkOption.NOFOLLOW_LINKS);
                }
            }
            if (metadata.mode().isPresent()) {
                if (attrs.isSymbolicLink()) {
                    throw VolumeException.invalid("the mode of a symbolic link cannot change");
                }
                chmod(entry, metadata.mode().getAsInt());
            }
            return stat(entry, path);
        });
    }

    /** Removes the file, link or directory (with everything below it) at {@code path}. */
    public void remove(VolumePath path) {
        if (path.isRoot()) {
            throw VolumeException.invalid("the volume's root cannot be removed");
        }
        io(() -> {
            Path entry = paths.locate(path);
            BasicFileAttributes attrs = existing(entry, path);
            if (!attrs.isDirectory()) {
                Files.delete(entry); // a link itself, never its target
                return null;
            }
            FileTrees.deleteTree(entry);
            return null;
        });
    }

    // ---- helpers -----------------------------------------------------------------------------------------------

    private void makeParents(VolumePath dir) throws IOException {
        for (int i = 1; i <= dir.components().size(); i++) {
            VolumePath step = new VolumePath(dir.components().subList(0, i));
            Path host = paths.locate(step);
            Optional<BasicFileAttributes> there = ConfinedPaths.attributes(host);
            if (there.isPresent()) {
                if (there.get().isSymbolicLink()) {
                    throw VolumeException.invalid(
                            "path " + step + " is a symbolic link; links are not followed in a volume");
                }
                if (!there.get().isDirectory()) {
                    throw VolumeException.invalid("path " + step + " is not a directory");
                }
                continue;
            }
            try {
                Files.createDirectory(host);
                own(host, Metadata.NONE, DEFAULT_DIR_MODE);
            } catch (FileAlreadyExistsException e) { // made at the same time by another request
                if (!Files.isDirectory(host, LinkOption.NOFOLLOW_LINKS)) {
                    throw VolumeException.invalid("path " + step + " is not a directory");
                }
            }
        }
    }

    private void requireParent(Path host, VolumePath path) throws IOException {
        Path parent = host.getParent();
        if (parent == null || ConfinedPaths.attributes(parent).isEmpty()) {
            throw VolumeException.notFound("parent of " + path + " not found");
        }
    }

    private void own(Path entry, Metadata metadata, int defaultMode) throws IOException {
        if (owner.chown()) {
            int uid = owner.toHost(metadata.uid().orElse(owner.defaultId()));
            int gid = owner.toHost(metadata.gid().orElse(owner.defaultId()));
            Files.setAttribute(entry, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(entry, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
        }
        chmod(entry, metadata.mode().orElse(defaultMode));
    }

    private static void chmod(Path entry, int mode) throws IOException {
        if (mode < 0 || mode > 07777) {
            throw VolumeException.invalid("mode must be from 0 to 07777");
        }
        Files.setAttribute(entry, "unix:mode", mode & MODE_MASK, LinkOption.NOFOLLOW_LINKS);
    }

    private static void syncDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    private static BasicFileAttributes existing(Path host, VolumePath path) throws IOException {
        return ConfinedPaths.attributes(host)
                .orElseThrow(() -> VolumeException.notFound("path " + path + " not found"));
    }

    private EntryStat stat(Path host, VolumePath path) throws IOException {
        return maybeStat(host, path).orElseThrow(() -> VolumeException.notFound("path " + path + " not found"));
    }

    private Optional<EntryStat> maybeStat(Path host, VolumePath path) throws IOException {
        Map<String, Object> unix;
        try {
            unix = Files.readAttributes(host, "unix:*", LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        BasicFileAttributes basic = Files.readAttributes(host, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        EntryStat.Type type = basic.isSymbolicLink()
                ? EntryStat.Type.SYMLINK
                : basic.isDirectory()
                        ? EntryStat.Type.DIRECTORY
                        : basic.isRegularFile() ? EntryStat.Type.FILE : EntryStat.Type.UNKNOWN;
        Optional<String> target = basic.isSymbolicLink()
                ? Optional.of(Files.readSymbolicLink(host).toString())
                : Optional.empty();
        return Optional.of(new EntryStat(
                path.name(),
                path.toString(),
                type,
                basic.size(),
                ((Integer) unix.get("mode")) & 07777,
                owner.toGuest((Integer) unix.get("uid")),
                owner.toGuest((Integer) unix.get("gid")),
                instant(unix.get("lastAccessTime")),
                instant(unix.get("lastModifiedTime")),
                instant(unix.get("ctime")),
                target));
    }

    private static Instant instant(Object time) {
        return time instanceof FileTime t ? t.toInstant() : Instant.EPOCH;
    }

    /** The body of an operation. */
    @FunctionalInterface
    private interface Work<T> {
        T run() throws IOException;
    }

    /** Runs {@code work}, turning file system failures into {@link VolumeException}s. */
    private static <T> T io(Work<T> work) {
        try {
            return work.run();
        } catch (NoSuchFileException e) {
            throw VolumeException.notFound("path not found");
        } catch (FileAlreadyExistsException e) {
            throw VolumeException.conflict("path already exists");
        } catch (AtomicMoveNotSupportedException e) {
            throw new VolumeException(VolumeException.Kind.INTERNAL, "rename failed", e);
        } catch (IOException e) {
            if (isNoSpace(e)) {
                throw new VolumeException(VolumeException.Kind.NO_SPACE, "the volume is full (no space left)", e);
            }
            if (e instanceof FileSystemException fs && isTypeClash(fs.getReason())) {
                throw VolumeException.conflict("path conflicts with what is there: " + fs.getReason());
            }
            if (e instanceof FileSystemException fs && fs.getReason() != null) {
                throw new VolumeException(VolumeException.Kind.INTERNAL, "file operation failed: " + fs.getReason(), e);
            }
            throw new VolumeException(VolumeException.Kind.INTERNAL, "file operation failed", e);
        }
    }

    /** A rename or removal that met the wrong kind of entry (a file for a directory or the other way round). */
    private static boolean isTypeClash(String reason) {
        return reason != null
                && (reason.contains("Not a directory")
                        || reason.contains("Is a directory")
                        || reason.contains("Directory not empty"));
    }

    static boolean isNoSpace(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String message = t.getMessage();
            if (message != null
                    && (message.contains("No space left on device") || message.contains("Disk quota exceeded"))) {
                return true;
            }
        }
        return false;
    }
}
