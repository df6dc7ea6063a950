package io.agentenv.objectstore;

import com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider;
import java.io.IOException;
import java.io.OutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.Provider;
import java.util.HexFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SHA-256 digests as the stores record them (lowercase hex), and a stream that counts and hashes what it passes.
 *
 * <p>Digests come from the Amazon Corretto Crypto Provider (AWS-LC, native code) where it loads: every byte of a
 * checkpoint is hashed on its way into and out of the store, and the server's JVM runs C1 only, which has no SHA
 * intrinsic (the JDK's digest there takes ~390 ms for 44 MiB, the native one ~30 ms). Elsewhere the JDK's own.
 */
final class Sha256 {
    private static final Logger log = LoggerFactory.getLogger(Sha256.class);
    private static final Provider NATIVE = nativeProvider();

    private Sha256() {}

    static MessageDigest newDigest() {
        try {
            return NATIVE != null ? MessageDigest.getInstance("SHA-256", NATIVE) : MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /** Which implementation {@link #newDigest()} uses: the provider's name. */
    static String provider() {
        return newDigest().getProvider().getName();
    }

    private static Provider nativeProvider() {
        try {
            Throwable error = AmazonCorrettoCryptoProvider.INSTANCE.getLoadingError();
            if (error == null) {
                return AmazonCorrettoCryptoProvider.INSTANCE;
            }
            log.atWarn().setCause(error).log("native SHA-256 unavailable; the JDK's digest is used (slower)");
        } catch (LinkageError | RuntimeException e) {
            log.atWarn().setCause(e).log("native SHA-256 unavailable; the JDK's digest is used (slower)");
        }
        return null;
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
