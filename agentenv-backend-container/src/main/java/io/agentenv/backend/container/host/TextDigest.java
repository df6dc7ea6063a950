package io.agentenv.backend.container.host;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** SHA-256 of a text, in hex: how the backend derives short stable names and keys from what they stand for. */
public final class TextDigest {
    private TextDigest() {}

    /** The 64 lower-case hex digits of SHA-256 over {@code text}'s UTF-8 bytes. */
    public static String sha256Hex(String text) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    /** The first {@code digits} hex digits of {@link #sha256Hex(String)}. */
    public static String sha256Hex(String text, int digits) {
        return sha256Hex(text).substring(0, digits);
    }
}
