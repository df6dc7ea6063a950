package io.agentenv.objectstore;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Objects that every node reaches: checkpoints of paused sandboxes, snapshots, templates. Thread-safe.
 *
 * <p>Guarantees, for every implementation:
 *
 * <ul>
 *   <li>An object is written whole: a reader sees the old object, the new one, or none, never a part, and a put
 *       that fails leaves the old object (or none) in place.
 *   <li>Every put records the object's size and SHA-256, and every read is checked against them: bytes that differ
 *       (tampered with, or damaged at rest or in transit) fail with {@link ObjectStoreException.Corrupt} and are not
 *       kept.
 *   <li>Concurrent puts of one key: the last to finish wins. There is no locking across keys or nodes; callers that
 *       need one writer per key get it elsewhere (a lease).
 * </ul>
 */
public interface ObjectStore extends AutoCloseable {

    /**
     * Stores {@code content} as {@code key}, replacing an object with that key.
     *
     * @return the size and SHA-256 of what was stored
     */
    ObjectInfo put(ObjectKey key, ContentWriter content) throws ObjectStoreException;

    /**
     * Stores the bytes of {@code file} as {@code key}, replacing an object with that key. The file must not change
     * while it is stored: the S3 store reads it twice (once to hash it, once to upload it) and fails if the passes
     * differ.
     */
    default ObjectInfo put(ObjectKey key, Path file) throws ObjectStoreException {
        return put(key, ContentWriter.ofFile(file));
    }

    /**
     * Streams the object into {@code reader}, then checks the bytes against the size and SHA-256 recorded by put.
     *
     * @return what the reader returned, once the bytes are known to be the ones written
     * @throws ObjectStoreException.NotFound if there is no such object
     * @throws ObjectStoreException.Corrupt if the bytes do not match; the reader's result is dropped
     * @throws ObjectStoreException.Failed if the reader failed
     */
    <T> T read(ObjectKey key, ContentReader<T> reader) throws ObjectStoreException;

    /**
     * Copies the object to {@code target}: written to a temp file beside it, checked, synced and renamed over it. On
     * any failure {@code target} is left as it was (absent, or the file it was).
     *
     * @return the object's size and SHA-256
     */
    default ObjectInfo get(ObjectKey key, Path target) throws ObjectStoreException {
        return Transfers.download(this, key, target);
    }

    /** The object's recorded size and SHA-256, or empty if there is no such object. */
    Optional<ObjectInfo> stat(ObjectKey key) throws ObjectStoreException;

    /**
     * Removes the object.
     *
     * @return whether there was one
     */
    boolean delete(ObjectKey key) throws ObjectStoreException;

    /**
     * Every object whose key starts with {@code prefix} (see {@link ObjectKey#checkPrefix}), sorted by key; the
     * store's pages are fetched until the last.
     */
    List<ObjectEntry> list(String prefix) throws ObjectStoreException;

    /** Releases the store's connections or files. */
    @Override
    void close();
}
