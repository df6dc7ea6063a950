package io.agentenv.objectstore;

import static java.util.Objects.requireNonNull;

/**
 * An object as a listing shows it: its key and size. The digest is not listed (S3 listings do not carry user
 * metadata); {@link ObjectStore#stat} gives it.
 *
 * @param key  the object's key
 * @param size its length in bytes
 */
public record ObjectEntry(ObjectKey key, long size) {
    public ObjectEntry {
        requireNonNull(key, "key");
        if (size < 0) {
            throw new IllegalArgumentException("size must be >= 0");
        }
    }
}
