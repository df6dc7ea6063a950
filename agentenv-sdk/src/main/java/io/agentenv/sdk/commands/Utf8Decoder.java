package io.agentenv.sdk.commands;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Decodes a byte stream that arrives in pieces, keeping a character split across two pieces whole. */
final class Utf8Decoder {
    private final CharsetDecoder decoder = StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPLACE)
            .onUnmappableCharacter(CodingErrorAction.REPLACE);
    private byte[] pending = new byte[0];

    /** The text of {@code chunk} (with what was left over before), holding back an incomplete last character. */
    String feed(byte[] chunk) {
        byte[] all = new byte[pending.length + chunk.length];
        System.arraycopy(pending, 0, all, 0, pending.length);
        System.arraycopy(chunk, 0, all, pending.length, chunk.length);
        ByteBuffer in = ByteBuffer.wrap(all);
        CharBuffer out = CharBuffer.allocate(all.length + 1);
        decoder.decode(in, out, false);
        pending = new byte[in.remaining()];
        in.get(pending);
        out.flip();
        return out.toString();
    }

    /** What is left at the end of the stream (an incomplete character becomes U+FFFD). */
    String finish() {
        ByteBuffer in = ByteBuffer.wrap(pending);
        CharBuffer out = CharBuffer.allocate(pending.length + 2);
        decoder.decode(in, out, true);
        decoder.flush(out);
        pending = new byte[0];
        out.flip();
        return out.toString();
    }
}
