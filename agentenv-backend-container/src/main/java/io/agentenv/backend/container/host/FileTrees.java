package io.agentenv.backend.container.host;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;

/** Removing the backend's directory trees (sandbox dirs, partial images, runc state dirs) from the host. */
public final class FileTrees {
    private FileTrees() {}

    /**
     * Removes a directory tree from here, without an {@code rm} process (~10 ms of fork and exec on a busy host, on
     * every pause and kill). Symlinks are removed, never followed; a tree with anything still mounted below it is
     * refused as a whole, so the backend never deletes into a mount (a sandbox's disk or overlay that failed to unmount).
     */
    public static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        List<Path> mounted = MountTable.mountsUnder(dir);
        if (!mounted.isEmpty()) {
            throw new IOException("not removing " + dir + ": still mounted below it: " + mounted);
        }
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path visited, IOException failed) throws IOException {
                if (failed != null) {
                    throw failed;
                }
                Files.delete(visited);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
