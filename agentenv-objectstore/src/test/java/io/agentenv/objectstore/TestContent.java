package io.agentenv.objectstore;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/** Content for tests: seeded pseudo-random bytes, streamed without being held in memory, and their digests. */
final class TestContent {
    private TestContent() {}

    /** {@code size} bytes from {@code seed}, the same on every call. */
    static byte[] bytes(long seed, int size) {
        byte[] bytes = new byte[size];
        new SplittableRandom(seed).nextBytes(bytes);
        return bytes;
    }

    /** A writer of {@code size} bytes from {@code seed}, produced 1 MiB at a time. */
    static ContentWriter writer(long seed, long size) {
        return out -> write(seed, size, out);
    }

    static void write(long seed, long size, OutputStream out) throws IOException {
        SplittableRandom random = new SplittableRandom(seed);
        byte[] chunk = new byte[1 << 20];
        long left = size;
        while (left > 0) {
            random.nextBytes(chunk);
            int n = (int) Math.min(chunk.length, left);
            out.write(chunk, 0, n);
            left -= n;
        }
    }

    /** The SHA-256 of what {@link #writer} writes. */
    static String sha256(long seed, long size) throws IOException {
        MessageDigest digest = Sha256.newDigest();
        write(seed, size, new OutputStream() {
            @Override
            public void write(int b) {
                digest.update((byte) b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                digest.update(b, off, len);
            }
        });
        return HexFormat.of().formatHex(digest.digest());
    }

    static String sha256(byte[] bytes) {
        return HexFormat.of().formatHex(Sha256.newDigest().digest(bytes));
    }

    static String sha256(Path file) throws IOException {
        MessageDigest digest = Sha256.newDigest();
        try (var in = Files.newInputStream(file)) {
            byte[] buffer = new byte[1 << 16];
            int n;
            while ((n = in.read(buffer)) > 0) {
                digest.update(buffer, 0, n);
            }
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    /** The names in {@code dir} (not recursive), sorted. */
    static List<String> names(Path dir) throws IOException {
        try (Stream<Path> children = Files.list(dir)) {
            return children.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }
}
