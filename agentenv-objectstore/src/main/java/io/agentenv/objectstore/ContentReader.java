package io.agentenv.objectstore;

import java.io.IOException;
import java.io.InputStream;

/**
 * Consumes an object's bytes as they arrive. The store checks them against the object's recorded size and SHA-256
 * only after the last byte, so a reader must keep what it makes provisional (a temp file, a staging directory) until
 * {@link ObjectStore#read} returns without an exception.
 *
 * @param <T> what the reader makes of the bytes
 */
@FunctionalInterface
public interface ContentReader<T> {

    /**
     * Reads from {@code in}; bytes it leaves unread are read (and checked) by the store after it returns.
     *
     * @param info the size and SHA-256 recorded when the object was written (not yet checked)
     */
    T readFrom(InputStream in, ObjectInfo info) throws IOException;
}
