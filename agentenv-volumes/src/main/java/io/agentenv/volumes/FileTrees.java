package io.agentenv.volumes;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/** Removing a directory tree without following a link out of it. */
public final class FileTrees {
    private FileTrees() {}

    /** Deletes {@code dir} and everything below it; a symbolic link inside is removed itself, never its target. */
    public static void deleteTree(Path dir) throws IOException {
        Files.walkFileTree(
                dir,
                new SimpleFileVisitor<>() { // does not follow links
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
