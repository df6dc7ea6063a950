package io.agentenv.volumes.content;

import static java.util.Objects.requireNonNull;

import io.agentenv.libc.DirFd;
import io.agentenv.libc.ErrnoException;
import io.agentenv.volumes.VolumeException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
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
 * read, rename, change owner and mode, remove. Sandboxes that mount the volume change its tree at the same time, so
 * every operation works through directory descriptors ({@link DirFd}): the directories on a path are opened one name
 * at a time with {@code openat2} refusing symbolic links, and the last name is acted on relative to its parent's
 * descriptor, a link itself or refused, never followed. A directory swapped for a link between two steps makes the
 * operation fail; it never reaches outside the volume. Entries made here belong to the guest default user unless the
 * request names other guest ids; permission bits are limited to {@code 0777} and the sticky bit. Errors are
 * {@link VolumeException}s; a full volume is {@code NO_SPACE}.
 */
public final class VolumeFiles {
    /** Permission bits a client may set: rwx for all and the sticky bit (set-id bits are dropped). */
    static final int MODE_MASK = 01777;

    static final int DEFAULT_FILE_MODE = 0644;
    static final int DEFAULT_DIR_MODE = 0755;
    static final int MAX_DEPTH = 32;
    static final int MAX_ENTRIES = 100_000;
    /** How deep a tree a remove walks (each level holds a directory descriptor). */
    static final int MAX_REMOVE_DEPTH = 1024;

    private static final String TEMP_PREFIX = ".aenv-write-";
    private static final String SELF = ".";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path root;
    private final GuestOwner owner;

    public VolumeFiles(Path root, GuestOwner owner) {
        this.root = requireNonNull(root, "root is null").toAbsolutePath().normalize();
        this.owner = requireNonNull(owner, "owner is null");
    }

    /** Ownership and mode a request asks for; empty fields keep the defaults (or, on update, what is there). */
    public record Metadata(OptionalInt uid, OptionalInt gid, OptionalInt mode) {
        public static final Metadata NONE = new Metadata(OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty());
    }

    public EntryStat stat(VolumePath path) {
        return io(() -> {
            try (DirFd parent = parentOf(path, false)) {
                return stat(parent, entry(path), path);
            }
        });
    }

    /** The entries below the directory {@code path}, {@code depth} levels deep (1: its children). */
    public List<EntryStat> list(VolumePath path, int depth) {
        if (depth < 1 || depth > MAX_DEPTH) {
            throw VolumeException.invalid("depth must be from 1 to " + MAX_DEPTH);
        }
        return io(() -> {
            try (DirFd parent = parentOf(path, false);
                    DirFd dir = directory(parent, path)) {
                List<EntryStat> found = new ArrayList<>();
                collect(dir, path, depth, found);
                return found;
            }
        });
    }

    private void collect(DirFd dir, VolumePath path, int depth, List<EntryStat> found) throws IOException {
        for (String name : names(dir)) {
            if (name.startsWith(TEMP_PREFIX)) {
                continue; // a write in progress (or one a crash left behind)
            }
            if (found.size() >= MAX_ENTRIES) {
                throw VolumeException.invalid("directory listing is larger than " + MAX_ENTRIES + " entries");
            }
            VolumePath childPath = path.child(name);
            Optional<EntryStat> stat = maybeStat(dir, name, childPath);
            if (stat.isEmpty()) {
                continue; // removed while listing
            }
            found.add(stat.get());
            if (depth > 1 && stat.get().type() == EntryStat.Type.DIRECTORY) {
                Optional<DirFd> child = openChildDir(dir, name);
                if (child.isPresent()) {
                    try (DirFd sub = child.get()) {
                        collect(sub, childPath, depth - 1, found);
                    }
                }
            }
        }
    }

    /** Makes the directory {@code path}; {@code parents} also makes missing parents and accepts an existing one. */
    public EntryStat makeDir(VolumePath path, boolean parents, Metadata metadata) {
        if (path.isRoot()) {
            throw VolumeException.conflict("the volume's root exists");
        }
        return io(() -> {
            try (DirFd parent = parentOf(path, parents)) {
                String name = path.name();
                if (!parent.makeDir(name, 0700)) {
                    Optional<BasicFileAttributes> there = attributes(parent, name);
                    if (parents && there.isPresent() && there.get().isDirectory()) {
                        return stat(parent, name, path);
                    }
                    throw VolumeException.conflict("path " + path + " already exists");
                }
                own(parent, name, metadata, DEFAULT_DIR_MODE);
                return stat(parent, name, path);
            }
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
            try (DirFd parent = parentOf(path, true)) {
                String name = path.name();
                Optional<BasicFileAttributes> there = attributes(parent, name);
                if (there.isPresent() && there.get().isDirectory()) {
                    throw VolumeException.conflict("path " + path + " is a directory");
                }
                String temp = TEMP_PREFIX + HexFormat.of().toHexDigits(RANDOM.nextLong());
                try {
                    // CREATE_NEW (O_EXCL) never follows a link at the name
                    try (FileChannel out = FileChannel.open(
                            parent.path(temp), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                        copy(content, out);
                        out.force(true);
                    }
                    own(parent, temp, metadata, DEFAULT_FILE_MODE);
                    parent.rename(temp, parent, name, true);
                    parent.sync();
                } catch (IOException | RuntimeException e) {
                    removeQuietly(parent, temp);
                    if (e instanceof ErrnoException errno && errno.errno() == ErrnoException.EISDIR) {
                        throw VolumeException.conflict("path " + path + " is a directory");
                    }
                    throw e;
                }
                return stat(parent, name, path);
            }
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
            try (DirFd parent = parentOf(path, false)) {
                String name = entry(path);
                BasicFileAttributes attrs = existing(parent, name, path);
                if (!attrs.isRegularFile()) {
                    throw notRegular(path);
                }
                FileChannel channel;
                try {
                    channel = parent.openRegularFile(name);
                } catch (ErrnoException e) {
                    if (e.errno() == ErrnoException.ELOOP) {
                        throw notRegular(path); // swapped for a link since the check
                    }
                    throw e;
                } catch (FileSystemException e) {
                    throw notRegular(path); // swapped for a FIFO or device since the check
                }
                return new OpenFile(channel, channel.size());
            }
        });
    }

    private static VolumeException notRegular(VolumePath path) {
        return VolumeException.invalid("path " + path + " is not a regular file");
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
            try (DirFd source = parentOf(from, false);
                    DirFd target = parentOf(to, false)) {
                existing(source, from.name(), from);
                try {
                    source.rename(from.name(), target, to.name(), overwrite);
                } catch (ErrnoException e) {
                    throw switch (e.errno()) {
                        case ErrnoException.EEXIST -> VolumeException.conflict("path " + to + " already exists");
                        case ErrnoException.ENOTEMPTY ->
                            VolumeException.conflict("path " + to + " is a directory that is not empty");
                        case ErrnoException.EISDIR, ErrnoException.ENOTDIR ->
                            VolumeException.conflict("path " + to + " conflicts with what is there: " + e.getMessage());
                        case ErrnoException.EINVAL -> VolumeException.invalid("cannot move " + from + " into itself");
                        default -> {
                            throw e;
                        }
                    };
                }
                target.sync();
                return stat(target, to.name(), to);
            }
        });
    }

    /** Changes the owner (guest ids) and mode of {@code path}; a link's mode cannot change. */
    public EntryStat update(VolumePath path, Metadata metadata) {
        return io(() -> {
            try (DirFd parent = parentOf(path, false)) {
                String name = entry(path);
                BasicFileAttributes attrs = existing(parent, name, path);
                if (owner.chown()
                        && (metadata.uid().isPresent() || metadata.gid().isPresent())) {
                    int uid = metadata.uid().isPresent()
                            ? owner.toHost(metadata.uid().getAsInt())
                            : -1;
                    int gid = metadata.gid().isPresent()
                            ? owner.toHost(metadata.gid().getAsInt())
                            : -1;
                    parent.changeOwner(name, uid, gid);
                }
                if (metadata.mode().isPresent()) {
                    if (attrs.isSymbolicLink()) {
                        throw VolumeException.invalid("the mode of a symbolic link cannot change");
                    }
                    chmod(parent, name, metadata.mode().getAsInt());
                }
                return stat(parent, name, path);
            }
        });
    }

    /** Removes the file, link or directory (with everything below it) at {@code path}. */
    public void remove(VolumePath path) {
        if (path.isRoot()) {
            throw VolumeException.invalid("the volume's root cannot be removed");
        }
        io(() -> {
            try (DirFd parent = parentOf(path, false)) {
                existing(parent, path.name(), path);
                removeEntry(parent, path.name(), 0);
                return null;
            }
        });
    }

    /** Removes {@code name} from {@code dir}: a link or file itself, a directory with everything below it. */
    private static void removeEntry(DirFd dir, String name, int depth) throws IOException {
        Optional<BasicFileAttributes> attrs = attributes(dir, name);
        if (attrs.isEmpty()) {
            return; // removed meanwhile
        }
        if (!attrs.get().isDirectory()) {
            try {
                dir.unlink(name); // a link itself, never its target
                return;
            } catch (ErrnoException e) {
                if (e.errno() == ErrnoException.ENOENT) {
                    return;
                }
                if (e.errno() != ErrnoException.EISDIR) {
                    throw e;
                }
                // swapped for a directory since the check: remove it as one
            }
        }
        if (depth >= MAX_REMOVE_DEPTH) {
            throw VolumeException.invalid("the tree to remove is deeper than " + MAX_REMOVE_DEPTH + " levels");
        }
        Optional<DirFd> opened = openChildDir(dir, name);
        if (opened.isEmpty()) {
            removeEntry(dir, name, depth + 1); // swapped for a file or a link since the check
            return;
        }
        try (DirFd sub = opened.get()) {
            for (String child : names(sub)) {
                removeEntry(sub, child, depth + 1);
            }
        }
        try {
            dir.removeDir(name);
        } catch (ErrnoException e) {
            if (e.errno() != ErrnoException.ENOENT) {
                throw e;
            }
        }
    }

    // ---- helpers -----------------------------------------------------------------------------------------------

    /**
     * The directory that holds {@code path}'s last name (the root for the root itself), opened one name at a time from
     * the root; {@code make} makes missing directories on the way. A link or a non-directory on the way is refused.
     */
    private DirFd parentOf(VolumePath path, boolean make) throws IOException {
        DirFd current = DirFd.open(root);
        try {
            List<String> parts = path.parent().components();
            for (int i = 0; i < parts.size(); i++) {
                String name = parts.get(i);
                VolumePath step = new VolumePath(parts.subList(0, i + 1));
                if (make && current.makeDir(name, 0700)) {
                    own(current, name, Metadata.NONE, DEFAULT_DIR_MODE);
                }
                DirFd next;
                try {
                    next = current.beneath(name);
                } catch (ErrnoException e) {
                    throw switch (e.errno()) {
                        case ErrnoException.ENOENT ->
                            VolumeException.notFound(
                                    make || i < parts.size() - 1
                                            ? "path " + path + " not found"
                                            : "parent of " + path + " not found");
                        case ErrnoException.ELOOP, ErrnoException.EXDEV ->
                            VolumeException.invalid(
                                    "path " + step + " is a symbolic link; links are not followed in a volume");
                        case ErrnoException.ENOTDIR -> VolumeException.invalid("path " + step + " is not a directory");
                        default -> {
                            throw e;
                        }
                    };
                }
                current.close();
                current = next;
            }
            return current;
        } catch (IOException | RuntimeException e) {
            current.close();
            throw e;
        }
    }

    /** The name of {@code path} in its parent ({@code .} for the root). */
    private static String entry(VolumePath path) {
        return path.isRoot() ? SELF : path.name();
    }

    /** Opens the directory {@code path} (its name in {@code parent}); anything else there is refused. */
    private static DirFd directory(DirFd parent, VolumePath path) throws IOException {
        String name = entry(path);
        BasicFileAttributes attrs = existing(parent, name, path);
        if (!attrs.isDirectory()) {
            throw VolumeException.invalid("path " + path + " is not a directory");
        }
        return openChildDir(parent, name)
                .orElseThrow(() -> VolumeException.invalid("path " + path + " is not a directory"));
    }

    /** The directory {@code name} below {@code dir}, or empty when it is not one (any more) or is gone. */
    private static Optional<DirFd> openChildDir(DirFd dir, String name) throws IOException {
        try {
            return Optional.of(dir.beneath(name));
        } catch (ErrnoException e) {
            return switch (e.errno()) {
                case ErrnoException.ELOOP, ErrnoException.ENOTDIR, ErrnoException.ENOENT, ErrnoException.EXDEV ->
                    Optional.empty();
                default -> throw e;
            };
        }
    }

    /** The names in {@code dir}, sorted. */
    private static List<String> names(DirFd dir) throws IOException {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir.path())) {
            entries.forEach(e -> names.add(e.getFileName().toString()));
        }
        names.sort(null);
        return names;
    }

    private void own(DirFd dir, String name, Metadata metadata, int defaultMode) throws IOException {
        if (owner.chown()) {
            int uid = owner.toHost(metadata.uid().orElse(owner.defaultId()));
            int gid = owner.toHost(metadata.gid().orElse(owner.defaultId()));
            dir.changeOwner(name, uid, gid);
        }
        chmod(dir, name, metadata.mode().orElse(defaultMode));
    }

    private static void chmod(DirFd dir, String name, int mode) throws IOException {
        if (mode < 0 || mode > 07777) {
            throw VolumeException.invalid("mode must be from 0 to 07777");
        }
        dir.changeMode(name, mode & MODE_MASK);
    }

    private static void removeQuietly(DirFd dir, String name) {
        try {
            dir.unlink(name);
        } catch (IOException e) {
            // already gone, or the volume is read-only now: nothing more to undo
        }
    }

    /** The entry's own attributes (a link's, not its target's), or empty when it does not exist. */
    private static Optional<BasicFileAttributes> attributes(DirFd dir, String name) throws IOException {
        try {
            return Optional.of(
                    Files.readAttributes(dir.path(name), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    private static BasicFileAttributes existing(DirFd dir, String name, VolumePath path) throws IOException {
        return attributes(dir, name).orElseThrow(() -> VolumeException.notFound("path " + path + " not found"));
    }

    private EntryStat stat(DirFd dir, String name, VolumePath path) throws IOException {
        return maybeStat(dir, name, path).orElseThrow(() -> VolumeException.notFound("path " + path + " not found"));
    }

    private Optional<EntryStat> maybeStat(DirFd dir, String name, VolumePath path) throws IOException {
        Path host = dir.path(name);
        Map<String, Object> unix;
        try {
            unix = Files.readAttributes(host, "unix:*", LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        boolean link = (Boolean) unix.get("isSymbolicLink");
        int mode = (Integer) unix.get("mode");
        EntryStat.Type type = link
                ? EntryStat.Type.SYMLINK
                : (Boolean) unix.get("isDirectory")
                        ? EntryStat.Type.DIRECTORY
                        : (Boolean) unix.get("isRegularFile") ? EntryStat.Type.FILE : EntryStat.Type.UNKNOWN;
        Optional<String> target = Optional.empty();
        if (link) {
            try {
                target = Optional.of(Files.readSymbolicLink(host).toString());
            } catch (NoSuchFileException | java.nio.file.NotLinkException e) {
                return Optional.empty(); // replaced meanwhile
            }
        }
        return Optional.of(new EntryStat(
                path.name(),
                path.toString(),
                type,
                (Long) unix.get("size"),
                mode & 07777,
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
        } catch (ErrnoException e) {
            throw switch (e.errno()) {
                case ErrnoException.ENOENT -> VolumeException.notFound("path not found");
                case ErrnoException.EEXIST -> VolumeException.conflict("path already exists");
                case ErrnoException.ELOOP, ErrnoException.EXDEV ->
                    VolumeException.invalid("path goes through a symbolic link; links are not followed in a volume");
                case ErrnoException.ENOTDIR, ErrnoException.EISDIR, ErrnoException.ENOTEMPTY ->
                    VolumeException.conflict("path conflicts with what is there: " + e.getMessage());
                case ErrnoException.ENOSPC, ErrnoException.EDQUOT -> noSpace(e);
                default ->
                    new VolumeException(VolumeException.Kind.INTERNAL, "file operation failed: " + e.getMessage(), e);
            };
        } catch (NoSuchFileException e) {
            throw VolumeException.notFound("path not found");
        } catch (FileAlreadyExistsException e) {
            throw VolumeException.conflict("path already exists");
        } catch (IOException e) {
            if (isNoSpace(e)) {
                throw noSpace(e);
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

    private static VolumeException noSpace(IOException e) {
        return new VolumeException(VolumeException.Kind.NO_SPACE, "the volume is full (no space left)", e);
    }

    /** A call that met the wrong kind of entry (a file for a directory or the other way round). */
    private static boolean isTypeClash(String reason) {
        return reason != null
                && (reason.contains("Not a directory")
                        || reason.contains("Is a directory")
                        || reason.contains("Directory not empty"));
    }

    static boolean isNoSpace(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ErrnoException errno
                    && (errno.errno() == ErrnoException.ENOSPC || errno.errno() == ErrnoException.EDQUOT)) {
                return true;
            }
            String message = t.getMessage();
            if (message != null
                    && (message.contains("No space left on device") || message.contains("Disk quota exceeded"))) {
                return true;
            }
        }
        return false;
    }
}
