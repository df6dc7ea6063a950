package io.agentenv.objectstore;

import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.UUID;
import java.util.function.Function;

/** The parts of reading and writing that both stores share: checked reads, downloads into place, fsync. */
final class Transfers {
    private Transfers() {}

    /**
     * Runs {@code reader} over {@code source}, checked against {@code info}, and maps what went wrong: bytes that
     * differ are {@link ObjectStoreException.Corrupt}, a failing source is whatever {@code sourceFailure} makes of
     * it, anything else (the reader's own I/O) is {@link ObjectStoreException.Failed}.
     */
    static <T> T readVerified(
            ObjectInfo info,
            InputStream source,
            ContentReader<T> reader,
            Function<Exception, ObjectStoreException> sourceFailure)
            throws ObjectStoreException {
        VerifyingInputStream in = new VerifyingInputStream(source, info);
        try {
            T result = reader.readFrom(in, info);
            in.drainAndVerify();
            return result;
        } catch (IOException | RuntimeException e) {
            if (in.corruption() != null) {
                ObjectStoreException corrupt = new ObjectStoreException.Corrupt(in.corruption());
                corrupt.addSuppressed(e);
                throw corrupt;
            }
            if (in.sourceFailure() != null) {
                throw sourceFailure.apply(in.sourceFailure());
            }
            throw new ObjectStoreException.Failed("reading " + info.key() + ": " + e, e);
        }
    }

    /** {@link ObjectStore#get}: a temp file beside {@code target}, checked, synced, renamed over it. */
    static ObjectInfo download(ObjectStore store, ObjectKey key, Path target) throws ObjectStoreException {
        Path absolute = target.toAbsolutePath();
        Path dir = absolute.getParent();
        Path temp = dir.resolve(".objectstore-" + UUID.randomUUID() + ".part");
        try {
            ObjectInfo info = store.read(key, (in, recorded) -> {
                try (FileChannel channel = FileChannel.open(temp, CREATE_NEW, WRITE)) {
                    OutputStream out = Channels.newOutputStream(channel);
                    in.transferTo(out);
                    channel.force(true);
                }
                return recorded;
            });
            Files.move(temp, absolute, StandardCopyOption.ATOMIC_MOVE);
            fsyncDirectory(dir);
            return info;
        } catch (IOException e) {
            throw new ObjectStoreException.Failed("moving " + key + " into " + absolute + ": " + e, e);
        } finally {
            deleteQuietly(temp);
        }
    }

    /** Makes a rename or removal in {@code dir} durable (fsync of the directory). */
    static void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, READ)) {
            channel.force(true);
        }
    }

    /**
     * Deletes {@code dir} and everything below it, if it exists. Links are removed, never followed; directories are
     * made writable by their owner first, so a tree unpacked with read-only directories can be removed by its owner.
     */
    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.walkFileTree(
                dir,
                new SimpleFileVisitor<>() { // links are not followed
                    @Override
                    public FileVisitResult preVisitDirectory(Path visited, BasicFileAttributes attrs)
                            throws IOException {
                        Files.setPosixFilePermissions(visited, PosixFilePermissions.fromString("rwx------"));
                        return FileVisitResult.CONTINUE;
                    }

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

    /**
     * Deletes {@code file} if it exists. A failure to do so is not reported: the operation it cleans up after has
     * already succeeded or failed for its own reason, and the file left is a temp file recognisable by its name.
     */
    static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // see above
        }
    }
}
