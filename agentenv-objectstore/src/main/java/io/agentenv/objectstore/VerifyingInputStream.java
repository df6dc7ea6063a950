package io.agentenv.objectstore;

import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;

/**
 * An object's bytes on their way to a {@link ContentReader}, counted and hashed. It throws as soon as more bytes
 * arrive than were recorded, and at the end of the source if the count or digest differ. It remembers why it
 * failed, since a reader may wrap or swallow the exception: {@link #corruption()} (the bytes are not the ones
 * written) or {@link #sourceFailure()} (the source broke: network, disk).
 */
final class VerifyingInputStream extends InputStream {

    /** Thrown into the reader when the bytes turn out not to be the ones written. */
    static final class ContentMismatch extends IOException {
        private static final long serialVersionUID = 1L;

        ContentMismatch(String message) {
            super(message);
        }
    }

    private final InputStream source;
    private final ObjectInfo expected;
    private final MessageDigest digest = Sha256.newDigest();
    private long count;
    private boolean verified;
    private String corruption;
    private Exception sourceFailure;

    VerifyingInputStream(InputStream source, ObjectInfo expected) {
        this.source = source;
        this.expected = expected;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (corruption != null) {
            throw new ContentMismatch(corruption);
        }
        if (len == 0) {
            return 0;
        }
        int n;
        try {
            n = source.read(b, off, len);
        } catch (IOException | RuntimeException e) {
            sourceFailure = e;
            throw e;
        }
        if (n < 0) {
            verify();
            return -1;
        }
        digest.update(b, off, n);
        count += n;
        if (count > expected.size()) {
            throw mismatch("more than the " + expected.size() + " bytes recorded");
        }
        return n;
    }

    /** Reads what the reader left and checks the whole; the source's own failures propagate as they are. */
    void drainAndVerify() throws IOException {
        byte[] buffer = new byte[64 * 1024];
        while (read(buffer, 0, buffer.length) >= 0) {
            // read() checks at the end
        }
    }

    private void verify() throws ContentMismatch {
        if (verified) {
            return;
        }
        if (count != expected.size()) {
            throw mismatch(count + " bytes where " + expected.size() + " were recorded");
        }
        String actual = Sha256.hex(digest.digest());
        if (!actual.equals(expected.sha256())) {
            throw mismatch("sha256 " + actual + " where " + expected.sha256() + " was recorded");
        }
        verified = true;
    }

    private ContentMismatch mismatch(String what) {
        corruption = expected.key() + ": " + what;
        return new ContentMismatch(corruption);
    }

    /** Why the bytes are not the ones written, or null. */
    String corruption() {
        return corruption;
    }

    /** What the source threw, or null. */
    Exception sourceFailure() {
        return sourceFailure;
    }

    @Override
    public void close() {
        // the store closes the source
    }
}
