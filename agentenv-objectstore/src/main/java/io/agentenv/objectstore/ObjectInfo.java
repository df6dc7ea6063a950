package io.agentenv.objectstore;

import static java.util.Objects.requireNonNull;

import java.util.regex.Pattern;

/**
 * What a store recorded for an object when it was written.
 *
 * @param key    the object's key
 * @param size   its length in bytes
 * @param sha256 the SHA-256 of its bytes, 64 lowercase hex digits; every read is checked against it
 */
public record ObjectInfo(ObjectKey key, long size, String sha256) {
    private static final Pattern SHA256_HEX = Pattern.compile("[0-9a-f]{64}");

    public ObjectInfo {
        requireNonNull(key, "key");
        requireNonNull(sha256, "sha256");
        if (size < 0) {
            throw new IllegalArgumentException("size must be >= 0");
        }
        if (!isSha256(sha256)) {
            throw new IllegalArgumentException("sha256 must be 64 lowercase hex digits");
        }
    }

    /** Whether {@code value} is a SHA-256 as this type holds it: 64 lowercase hex digits. */
    public static boolean isSha256(String value) {
        return value != null && SHA256_HEX.matcher(value).matches();
    }
}
