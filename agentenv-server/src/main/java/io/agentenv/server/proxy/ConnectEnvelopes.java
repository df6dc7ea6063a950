package io.agentenv.server.proxy;

import java.nio.ByteBuffer;

/**
 * Follows the envelopes of a Connect streaming body ({@code application/connect+json} or {@code +proto}: each message
 * is a flags byte, a 4-byte big-endian length and that many bytes) as its bytes pass through the proxy, to tell when
 * the bytes so far end exactly after the end-of-stream envelope (flag {@code 0x02}), which by the protocol is the
 * stream's last message. Reads the bytes without consuming or copying them; one instance per response, not
 * thread-safe (the proxy's reads of one response are serialized).
 */
final class ConnectEnvelopes {
    static final int END_STREAM_FLAG = 0x02;
    private static final int HEADER = 5;

    private int headerSeen; // bytes of the current envelope's header seen so far (0 while between envelopes)
    private int flags;
    private long length;
    private long payloadLeft; // payload bytes of the current envelope still to come
    private boolean endStreamComplete; // the last complete envelope was the end of stream, and nothing came after it

    /** Whether this content type is a Connect streaming body. */
    static boolean isStream(String contentType) {
        return contentType != null && contentType.regionMatches(true, 0, "application/connect+", 0, 20);
    }

    /** Follows {@code bytes} (from its position to its limit; the buffer is not changed). */
    void follow(ByteBuffer bytes) {
        int at = bytes.position();
        int limit = bytes.limit();
        while (at < limit) {
            endStreamComplete = false;
            if (payloadLeft > 0) {
                int skip = (int) Math.min(payloadLeft, limit - at);
                at += skip;
                payloadLeft -= skip;
            } else {
                int b = bytes.get(at++) & 0xFF;
                if (headerSeen == 0) {
                    flags = b;
                    length = 0;
                } else {
                    length = (length << 8) | b;
                }
                headerSeen++;
                if (headerSeen < HEADER) {
                    continue;
                }
                headerSeen = 0;
                payloadLeft = length;
            }
            if (payloadLeft == 0 && headerSeen == 0) {
                endStreamComplete = (flags & END_STREAM_FLAG) != 0;
            }
        }
    }

    /** Whether the bytes so far end exactly after a complete end-of-stream envelope. */
    boolean atEndOfStream() {
        return endStreamComplete;
    }
}
