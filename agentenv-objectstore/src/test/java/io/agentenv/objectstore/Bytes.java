package io.agentenv.objectstore;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;

/** Changes to stored files behind a store's back. */
final class Bytes {
    private Bytes() {}

    /** Flips the lowest bit of the byte at {@code offset} of {@code file}. */
    static void flipBit(Path file, long offset) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.seek(offset);
            int b = raf.read();
            raf.seek(offset);
            raf.write(b ^ 1);
        }
    }
}
