package io.agentenv.objectstore;

import java.io.IOException;
import java.io.OutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** SHA-256 digests as the stores record them (lowercase hex), and a stream that counts and hashes what it passes. */
final class Sha256 {
    private Sha256() {}

    static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    static String hex(byte[] digest) {
        return HexFormat.of().formatHex(digest);
    }

    static byte[] bytes(String hex) {
        return HexFormat.of().parseHex(hex);
    }

    /**
     * Hashes and counts the bytes written through it before passing them on. {@link #close()} flushes and leaves
     * the underlying stream open, so content writers may close what they were given.
     */
    static final class HashingOutputStream extends OutputStream {
        private final OutputStream out;
        private final MessageDigest digest = newDigest();
        private long count;

        HashingOutputStream(OutputStream out) {
            this.out = out;
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            digest.update((byte) b);
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            digest.update(b, off, len);
            count += len;
        }

        @Override
        public void flush() throws IOException {
            out.flush();
        }

        @Override
        public void close() throws IOException {
            out.flush();
        }

        long count() {
            return count;
        }

        /** The digest of everything written; call once, after the last write. */
        String sha256() {
            return hex(digest.digest());
        }
    }
}
