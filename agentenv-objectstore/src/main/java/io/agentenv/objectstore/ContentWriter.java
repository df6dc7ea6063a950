package io.agentenv.objectstore;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * An object's content, written on demand. A store may call {@link #writeTo} more than once (the S3 store hashes the
 * content before it uploads it, since the digest travels in the upload's first request), and every call must write
 * the same bytes; a put whose passes differ fails without storing anything.
 */
@FunctionalInterface
public interface ContentWriter {

    /**
     * Writes the content to {@code out}. Closing {@code out} is allowed and does nothing.
     *
     * @throws IOException if the content cannot be produced; the put then fails with {@link
     *     ObjectStoreException.Failed}
     */
    void writeTo(OutputStream out) throws IOException;

    /** The bytes of {@code file} (links followed), read again on each call. */
    static ContentWriter ofFile(Path file) {
        requireNonNull(file, "file");
        return out -> Files.copy(file, out);
    }
}
