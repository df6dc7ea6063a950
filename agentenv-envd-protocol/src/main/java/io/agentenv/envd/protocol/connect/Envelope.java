package io.agentenv.envd.protocol.connect;

import static java.util.Objects.requireNonNull;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.Optional;

/**
 * One Connect streaming frame: a flags byte, a 4-byte big-endian length and the payload.
 *
 * @param flags   {@link #FLAG_COMPRESSED} and/or {@link #FLAG_END_STREAM}
 * @param payload the message bytes (JSON or binary protobuf), or the end-stream JSON
 */
public record Envelope(int flags, byte[] payload) {
    public static final int FLAG_COMPRESSED = 0x01;
    public static final int FLAG_END_STREAM = 0x02;
    public static final int HEADER_LENGTH = 5;

    public Envelope {
        if (flags < 0 || flags > 0xff) {
            throw new IllegalArgumentException("flags must fit in one byte: " + flags);
        }
        requireNonNull(payload, "payload is null");
        payload = payload.clone();
    }

    public static Envelope message(byte[] payload) {
        return new Envelope(0, payload);
    }

    public static Envelope endStream(byte[] payload) {
        return new Envelope(FLAG_END_STREAM, payload);
    }

    public boolean isEndStream() {
        return (flags & FLAG_END_STREAM) != 0;
    }

    public boolean isCompressed() {
        return (flags & FLAG_COMPRESSED) != 0;
    }

    @Override
    public byte[] payload() {
        return payload.clone();
    }

    /** Header and payload, ready to be written in one call. */
    public byte[] encode() {
        byte[] frame = new byte[HEADER_LENGTH + payload.length];
        frame[0] = (byte) flags;
        int length = payload.length;
        frame[1] = (byte) (length >>> 24);
        frame[2] = (byte) (length >>> 16);
        frame[3] = (byte) (length >>> 8);
        frame[4] = (byte) length;
        System.arraycopy(payload, 0, frame, HEADER_LENGTH, length);
        return frame;
    }

    public void writeTo(OutputStream out) throws IOException {
        out.write(encode());
    }

    /**
     * Reads the next envelope. Returns empty at a clean end of input (before any header byte).
     *
     * @throws RpcException {@code invalid_argument} for a truncated envelope, {@code resource_exhausted} when the
     *                      payload is larger than {@code maxPayload}
     */
    public static Optional<Envelope> read(InputStream in, int maxPayload) throws IOException {
        int first = in.read();
        if (first < 0) {
            return Optional.empty();
        }
        byte[] rest = new byte[HEADER_LENGTH - 1];
        readFully(in, rest);
        long length = ((rest[0] & 0xffL) << 24) | ((rest[1] & 0xff) << 16) | ((rest[2] & 0xff) << 8) | (rest[3] & 0xff);
        if (length > maxPayload) {
            throw new RpcException(
                    ConnectCode.RESOURCE_EXHAUSTED,
                    "message size " + length + " is larger than the limit " + maxPayload);
        }
        byte[] payload = new byte[(int) length];
        readFully(in, payload);
        return Optional.of(new Envelope(first, payload));
    }

    private static void readFully(InputStream in, byte[] into) throws IOException {
        try {
            int n = in.readNBytes(into, 0, into.length);
            if (n != into.length) {
                throw new EOFException();
            }
        } catch (EOFException e) {
            throw RpcException.invalidArgument("protocol error: incomplete envelope");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Envelope other && flags == other.flags && Arrays.equals(payload, other.payload);
    }

    @Override
    public int hashCode() {
        return 31 * flags + Arrays.hashCode(payload);
    }

    @Override
    public String toString() {
        return "Envelope[flags=" + flags + ", length=" + payload.length + "]";
    }
}
