package io.agentenv.objectstore;

import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
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
     * Deletes {@code file} if it exists; a failure to do so is not the caller's error to report (the operation it
     * cleans up after already succeeded or failed for its own reason) and leaves a temp file that the store's own
     * clean-up removes later.
     */
    static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // see above
        }
    }
}
