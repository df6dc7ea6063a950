package io.agentenv.objectstore;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;

/**
 * Directory trees (checkpoints, template root filesystems) as single tar objects in an {@link ObjectStore}.
 *
 * <p>{@link #putTree} packs a directory into a POSIX (pax) tar written straight into the store, with no copy on
 * local disk: directories, regular files and symbolic links (as links, never followed), each with its permission bits
 * (setuid, setgid and sticky included), owner ids and modification time. Entries are sorted by name and carry no
 * access times, so packing an unchanged tree twice gives the same bytes (the S3 store packs large trees twice: once
 * to hash, once to upload). Hard links are stored as separate copies of their file, sparse files as plain files;
 * devices, FIFOs and sockets are refused.
 *
 * <p>{@link #getTree} unpacks into a fresh, private directory beside the target and renames it into place once the
 * whole object is read and its digest checked, so the target appears complete or not at all. The archive comes from
 * another machine and is not trusted: an entry that is absolute, has a {@code ..} segment, lies beneath a symbolic
 * link, or comes before its parent directory is refused, as are hard links, devices, FIFOs, sparse entries and
 * duplicate names; files are created exclusively (an existing name, link or not, is never opened) and links are
 * created but never followed. Owners are restored when running as root. A refused archive leaves nothing behind.
 */
public final class DirectoryArchives {

    private static final int TYPE_MASK = 0170000;
    private static final int PERMISSION_MASK = 07777;

    private final ObjectStore store;
    private final boolean restoreOwners;

    /** Archives in {@code store}. */
    public DirectoryArchives(ObjectStore store) {
        this.store = Objects.requireNonNull(store, "store");
        this.restoreOwners = isRoot();
    }

    /**
     * Packs {@code dir} (which must not change meanwhile) into the object {@code key}.
     *
     * @return the archive object's size and SHA-256
     * @throws ObjectStoreException.Failed if {@code dir} is not a directory, holds a device, FIFO or socket, or
     *     changed while it was packed
     */
    public ObjectInfo putTree(ObjectKey key, Path dir) throws ObjectStoreException {
        Objects.requireNonNull(key, "key");
        Path root;
        try {
            root = dir.toRealPath();
        } catch (IOException e) {
            throw new ObjectStoreException.Failed("pack " + dir + ": " + e, e);
        }
        if (!Files.isDirectory(root, NOFOLLOW_LINKS)) {
            throw new ObjectStoreException.Failed("pack " + dir + ": not a directory");
        }
        return store.put(key, out -> pack(root, out));
    }

    /**
     * Unpacks the object {@code key} into {@code targetDir}, which must not exist.
     *
     * @return the archive object's size and SHA-256
     * @throws ObjectStoreException.Corrupt if the object's bytes are not the ones written
     * @throws ObjectStoreException.Failed if the target exists, or the archive holds a refused entry
     */
    public ObjectInfo getTree(ObjectKey key, Path targetDir) throws ObjectStoreException {
        Objects.requireNonNull(key, "key");
        Path target = targetDir.toAbsolutePath().normalize();
        Path parent = target.getParent();
        if (parent == null) {
            throw new ObjectStoreException.Failed("unpack " + key + ": no directory around " + target);
        }
        if (Files.exists(target, NOFOLLOW_LINKS)) {
            throw new ObjectStoreException.Failed("unpack " + key + ": " + target + " exists");
        }
        Path staging = parent.resolve(".objectstore-tree-" + UUID.randomUUID());
        try {
            Files.createDirectory(
                    staging, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            ObjectInfo info = store.read(key, (in, recorded) -> {
                new Unpacker(staging).unpack(in);
                return recorded;
            });
            Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
            Transfers.fsyncDirectory(parent);
            return info;
        } catch (IOException e) {
            throw new ObjectStoreException.Failed("unpack " + key + " into " + target + ": " + e, e);
        } finally {
            removeStaging(staging);
        }
    }

    private static void pack(Path root, OutputStream out) throws IOException {
        TarArchiveOutputStream tar = new TarArchiveOutputStream(out);
        tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
        tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
        tar.setAddPaxHeadersForNonAsciiNames(true);
        packEntry(tar, root, "./");
        tar.finish();
        tar.flush();
    }

    /** Writes {@code path}'s entry as {@code name}, then, for a directory, its children sorted by name. */
    private static void packEntry(TarArchiveOutputStream tar, Path path, String name) throws IOException {
        Map<String, Object> attrs =
                Files.readAttributes(path, "unix:mode,uid,gid,size,lastModifiedTime", NOFOLLOW_LINKS);
        int mode = (Integer) attrs.get("mode");
        int type = mode & TYPE_MASK;
        TarArchiveEntry entry;
        switch (type) {
            case 0040000 -> entry = new TarArchiveEntry(name, TarConstants.LF_DIR);
            case 0100000 -> {
                entry = new TarArchiveEntry(name, TarConstants.LF_NORMAL);
                entry.setSize((Long) attrs.get("size"));
            }
            case 0120000 -> {
                entry = new TarArchiveEntry(name, TarConstants.LF_SYMLINK);
                entry.setLinkName(Files.readSymbolicLink(path).toString());
            }
            default ->
                throw new IOException(path + ": not a directory, regular file or symbolic link (mode "
                        + Integer.toOctalString(mode) + ")");
        }
        entry.setMode(mode & PERMISSION_MASK);
        entry.setUserId(((Integer) attrs.get("uid")).longValue());
        entry.setGroupId(((Integer) attrs.get("gid")).longValue());
        entry.setModTime((FileTime) attrs.get("lastModifiedTime"));
        tar.putArchiveEntry(entry);
        if (type == 0100000) {
            copyExactly(path, entry.getSize(), tar);
        }
        tar.closeArchiveEntry();
        if (type == 0040000) {
            List<String> children = new ArrayList<>();
            try (DirectoryStream<Path> stream = Files.newDirectoryStream(path)) {
                for (Path child : stream) {
                    children.add(child.getFileName().toString());
                }
            }
            children.sort(null);
            String prefix = name.equals("./") ? "" : name;
            for (String child : children) {
                Path childPath = path.resolve(child);
                boolean isDir = Files.isDirectory(childPath, NOFOLLOW_LINKS);
                packEntry(tar, childPath, prefix + child + (isDir ? "/" : ""));
            }
        }
    }

    private static void copyExactly(Path file, long size, OutputStream out) throws IOException {
        try (InputStream in = Files.newInputStream(file, StandardOpenOption.READ, NOFOLLOW_LINKS)) {
            byte[] buffer = new byte[1 << 16];
            long left = size;
            while (left > 0) {
                int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
                if (n < 0) {
                    throw new IOException(file + " shrank while it was packed");
                }
                out.write(buffer, 0, n);
                left -= n;
            }
        }
    }

    /** Unpacks one archive into a private staging directory, refusing anything that could reach outside it. */
    private final class Unpacker {
        private final Path staging;
        private final List<Deferred> directories = new ArrayList<>();

        /** A directory's metadata, applied after its children are in (a read-only directory would refuse them). */
        private record Deferred(Path dir, TarArchiveEntry entry) {}

        Unpacker(Path staging) {
            this.staging = staging;
        }

        void unpack(InputStream in) throws IOException {
            TarArchiveInputStream tar = new TarArchiveInputStream(in);
            TarArchiveEntry entry;
            while ((entry = tar.getNextEntry()) != null) {
                Path path = place(entry.getName());
                if (entry.isSparse()) {
                    throw refused(entry, "sparse entry");
                }
                byte flag = entry.getLinkFlag();
                if (flag == TarConstants.LF_DIR) {
                    directory(path, entry);
                } else if (flag == TarConstants.LF_NORMAL || flag == TarConstants.LF_OLDNORM) {
                    file(path, entry, tar);
                } else if (flag == TarConstants.LF_SYMLINK) {
                    symlink(path, entry);
                } else {
                    throw refused(entry, "entry type '" + (char) flag + "' (hard link, device, FIFO...)");
                }
            }
            for (int i = directories.size() - 1; i >= 0; i--) {
                Deferred d = directories.get(i);
                applyMetadata(d.dir(), d.entry(), true);
            }
        }

        /**
         * Where an entry goes: beneath the staging directory, with every directory on the way a real directory
         * that an earlier entry made (so never a symbolic link).
         */
        private Path place(String name) throws IOException {
            if (name.isEmpty() || name.indexOf('\0') >= 0) {
                throw new IOException("archive entry with an empty or NUL-containing name refused");
            }
            if (name.startsWith("/")) {
                throw new IOException("archive entry '" + name + "' refused: absolute path");
            }
            Path path = staging;
            for (String segment : name.split("/")) {
                if (segment.equals("..")) {
                    throw new IOException("archive entry '" + name + "' refused: '..' segment");
                }
                if (segment.isEmpty() || segment.equals(".")) {
                    continue;
                }
                BasicFileAttributes parent = attributes(path);
                if (parent == null || !parent.isDirectory()) {
                    throw new IOException("archive entry '" + name + "' refused: "
                            + (parent == null
                                    ? "its directory is not in the archive before it"
                                    : staging.relativize(path) + " is not a directory (a link?)"));
                }
                path = path.resolve(segment);
            }
            if (!path.normalize().startsWith(staging)) {
                throw new IOException("archive entry '" + name + "' refused: outside the target");
            }
            return path;
        }

        private void directory(Path path, TarArchiveEntry entry) throws IOException {
            if (!path.equals(staging)) {
                try {
                    Files.createDirectory(path);
                } catch (FileAlreadyExistsException e) {
                    BasicFileAttributes existing = attributes(path);
                    if (existing == null || !existing.isDirectory()) {
                        throw refused(entry, "a directory where a file or link was");
                    }
                }
            }
            directories.add(new Deferred(path, entry));
        }

        private void file(Path path, TarArchiveEntry entry, InputStream content) throws IOException {
            if (path.equals(staging)) {
                throw refused(entry, "a file as the root");
            }
            try (OutputStream out = Files.newOutputStream(
                    path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, NOFOLLOW_LINKS)) {
                long copied = content.transferTo(out);
                if (copied != entry.getSize()) {
                    throw refused(entry, "truncated content");
                }
            } catch (FileAlreadyExistsException e) {
                throw refused(entry, "duplicate name");
            }
            applyMetadata(path, entry, true);
        }

        private void symlink(Path path, TarArchiveEntry entry) throws IOException {
            if (path.equals(staging)) {
                throw refused(entry, "a link as the root");
            }
            String target = entry.getLinkName();
            if (target.isEmpty() || target.indexOf('\0') >= 0) {
                throw refused(entry, "empty or NUL-containing link target");
            }
            try {
                Files.createSymbolicLink(path, Path.of(target));
            } catch (FileAlreadyExistsException e) {
                throw refused(entry, "duplicate name");
            }
            applyMetadata(path, entry, false);
        }

        /** Owner (as root), then permissions (chown clears setuid), then modification time; links are not followed. */
        private void applyMetadata(Path path, TarArchiveEntry entry, boolean hasMode) throws IOException {
            if (restoreOwners) {
                Files.setAttribute(path, "unix:uid", (int) entry.getLongUserId(), NOFOLLOW_LINKS);
                Files.setAttribute(path, "unix:gid", (int) entry.getLongGroupId(), NOFOLLOW_LINKS);
            }
            if (hasMode) {
                Files.setAttribute(path, "unix:mode", entry.getMode() & PERMISSION_MASK, NOFOLLOW_LINKS);
            }
            FileTime mtime = entry.getLastModifiedTime();
            Files.getFileAttributeView(path, BasicFileAttributeView.class, NOFOLLOW_LINKS)
                    .setTimes(mtime, null, null);
        }

        private BasicFileAttributes attributes(Path path) throws IOException {
            try {
                return Files.readAttributes(path, BasicFileAttributes.class, NOFOLLOW_LINKS);
            } catch (NoSuchFileException e) {
                return null;
            }
        }

        private IOException refused(TarArchiveEntry entry, String why) {
            return new IOException("archive entry '" + entry.getName() + "' refused: " + why);
        }
    }

    /** Removes what is left of a staging directory; what cannot be removed stays, named .objectstore-tree-*. */
    private static void removeStaging(Path staging) {
        try {
            Transfers.deleteTree(staging);
        } catch (IOException e) {
            // visible by its name; the failure that led here is the one reported
        }
    }

    private static boolean isRoot() {
        try {
            return Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }
}
