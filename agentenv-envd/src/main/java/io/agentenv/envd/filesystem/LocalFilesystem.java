package io.agentenv.envd.filesystem;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;

/**
 * The filesystem operations behind envd's {@code filesystem.Filesystem} service and {@code /files}, on absolute paths
 * that the caller has already resolved for the requesting user. Blocking; safe for concurrent use (no state).
 */
public final class LocalFilesystem {
    private static final int MAX_DEPTH = 1 << 16;

    /** Describes one entry (not following a final symlink). */
    public Entry stat(Path path) {
        requireAbsolute(path);
        try {
            return new EntryReader().read(path);
        } catch (NoSuchFileException e) {
            throw new FsException(FsError.NOT_FOUND, "file not found: '" + path + "'", e);
        } catch (IOException e) {
            FsException failure = FsException.of(e, "error getting file info of", path);
            if (failure.error() == FsError.INVALID_ARGUMENT) { // a parent is a file (ENOTDIR): nothing is there
                throw new FsException(FsError.NOT_FOUND, "file not found: '" + path + "'", e);
            }
            throw failure;
        }
    }

    /**
     * Lists the descendants of a directory down to {@code depth} levels (0 means 1), in lexical pre-order, without
     * descending into symlinked directories. A symlink at {@code path} itself is followed, but the entries' paths keep
     * the requested prefix.
     */
    public List<Entry> listDir(Path path, int depth) {
        requireAbsolute(path);
        if (depth < 0) {
            throw new FsException(FsError.INVALID_ARGUMENT, "depth must be >= 0, got " + depth);
        }
        int levels = Math.min(depth == 0 ? 1 : depth, MAX_DEPTH);
        Path resolved;
        try {
            resolved = path.toRealPath();
        } catch (NoSuchFileException e) {
            throw new FsException(FsError.NOT_FOUND, "path not found: '" + path + "'", e);
        } catch (IOException e) {
            throw FsException.of(e, "error resolving", path);
        }
        if (!Files.isDirectory(resolved)) {
            throw new FsException(FsError.INVALID_ARGUMENT, "path is not a directory: '" + path + "'");
        }
        List<Entry> entries = new ArrayList<>();
        walk(new EntryReader(), path, resolved, levels, entries);
        return entries;
    }

    private static void walk(EntryReader reader, Path shown, Path actual, int levelsLeft, List<Entry> out) {
        List<Path> children = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(actual)) {
            stream.forEach(children::add);
        } catch (NoSuchFileException e) {
            return; // removed while we were walking
        } catch (IOException e) {
            throw FsException.of(e, "error reading directory", shown);
        }
        children.sort(null);
        for (Path child : children) {
            Path name = child.getFileName();
            Path shownChild = shown.resolve(name);
            Entry entry;
            try {
                entry = reader.read(child);
            } catch (NoSuchFileException e) {
                continue;
            } catch (IOException e) {
                throw FsException.of(e, "error getting file info of", shownChild);
            }
            out.add(shownChild.equals(child) ? entry : withPath(entry, shownChild));
            boolean realDirectory =
                    entry.type() == FileType.DIRECTORY && entry.symlinkTarget().isEmpty(); // not a link
            if (levelsLeft > 1 && realDirectory) {
                walk(reader, shownChild, child, levelsLeft - 1, out);
            }
        }
    }

    private static Entry withPath(Entry e, Path path) {
        return new Entry(
                e.name(),
                e.type(),
                path.toString(),
                e.size(),
                e.mode(),
                e.permissions(),
                e.owner(),
                e.group(),
                e.modifiedTime(),
                e.symlinkTarget(),
                e.metadata());
    }

    /**
     * Creates a directory and any missing parents, all owned by {@code owner}.
     *
     * @throws FsException {@link FsError#ALREADY_EXISTS} if the directory exists, {@link FsError#INVALID_ARGUMENT} if
     *     a file is in the way
     */
    public Entry makeDir(Path path, Ownership owner) {
        requireAbsolute(path);
        if (Files.exists(path)) {
            if (Files.isDirectory(path)) {
                throw new FsException(FsError.ALREADY_EXISTS, "directory already exists: '" + path + "'");
            }
            throw new FsException(
                    FsError.INVALID_ARGUMENT, "path already exists but it is not a directory: '" + path + "'");
        }
        ensureDirectories(path, owner);
        return stat(path);
    }

    /** Creates {@code dir} and its missing parents (mode 0755 less the umask), each new one owned by {@code owner}. */
    public void ensureDirectories(Path dir, Ownership owner) {
        requireAbsolute(dir);
        List<Path> missing = new ArrayList<>();
        Path current = dir;
        while (current != null && !Files.exists(current)) {
            missing.add(current);
            current = current.getParent();
        }
        if (current != null && !Files.isDirectory(current)) {
            throw new FsException(FsError.INVALID_ARGUMENT, "path '" + current + "' exists but it is not a directory");
        }
        for (Path created : missing.reversed()) {
            try {
                Files.createDirectory(created);
                chown(created, owner);
            } catch (FileAlreadyExistsException e) {
                if (!Files.isDirectory(created)) {
                    throw new FsException(
                            FsError.INVALID_ARGUMENT, "path '" + created + "' exists but it is not a directory", e);
                }
            } catch (IOException e) {
                throw FsException.of(e, "error creating directory", created);
            }
        }
    }

    /** Gives {@code path} (not a symlink's target) to {@code owner}. */
    public void chown(Path path, Ownership owner) throws IOException {
        Files.setAttribute(path, "unix:uid", owner.uid(), LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(path, "unix:gid", owner.gid(), LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * Renames {@code source} to {@code destination} like rename(2) (an existing destination file is replaced), creating
     * the destination's missing parents for {@code owner}; across filesystems it falls back to copy and delete.
     */
    public Entry move(Path source, Path destination, Ownership owner) {
        requireAbsolute(source);
        requireAbsolute(destination);
        if (!Files.exists(source, LinkOption.NOFOLLOW_LINKS)) {
            throw new FsException(FsError.NOT_FOUND, "source file not found: '" + source + "'");
        }
        Path parent = destination.getParent();
        if (parent != null) {
            ensureDirectories(parent, owner);
        }
        try {
            try {
                Files.move(source, destination, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(source, destination, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (NoSuchFileException e) {
            throw new FsException(FsError.NOT_FOUND, "source file not found: '" + source + "'", e);
        } catch (IOException e) {
            throw FsException.of(e, "error renaming '" + source + "' to", destination);
        }
        return stat(destination);
    }

    /** Removes a file, a symlink (not its target) or a whole directory tree; a missing path is not an error. */
    public void remove(Path path) {
        requireAbsolute(path);
        if (path.getParent() == null) {
            throw new FsException(FsError.INVALID_ARGUMENT, "refusing to remove the root directory");
        }
        try {
            Files.walkFileTree(path, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                    if (e instanceof NoSuchFileException) {
                        return FileVisitResult.CONTINUE;
                    }
                    throw e;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                    if (e != null && !(e instanceof NoSuchFileException)) {
                        throw e;
                    }
                    Files.deleteIfExists(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (NoSuchFileException e) {
            // already gone
        } catch (IOException e) {
            throw FsException.of(e, "error removing file or directory", path);
        }
    }

    private static void requireAbsolute(Path path) {
        requireNonNull(path, "path is null");
        if (!path.isAbsolute()) {
            throw new IllegalArgumentException("path must be absolute (resolve it for the user first): " + path);
        }
    }
}
