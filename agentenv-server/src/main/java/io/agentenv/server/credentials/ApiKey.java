package io.agentenv.server.credentials;

import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.regex.Pattern;

/**
 * The platform API key that every control-plane request must carry in {@code X-API-Key}. Compared in constant time;
 * never printed ({@link #toString()} is redacted).
 */
public final class ApiKey {
    /** URL-safe characters, 16..256 of them: long enough to not be guessable, short enough for a header. */
    private static final Pattern FORMAT = Pattern.compile("[A-Za-z0-9._~-]{16,256}");

    private final byte[] value;

    private ApiKey(byte[] value) {
        this.value = value;
    }

    /** Rejects keys that are too short, too long or not URL-safe, without echoing the key. */
    public static ApiKey of(String value) {
        requireNonNull(value, "value is null");
        if (!FORMAT.matcher(value).matches()) {
            throw new IllegalArgumentException("API key must be 16 to 256 URL-safe characters ([A-Za-z0-9._~-])");
        }
        return new ApiKey(value.getBytes(StandardCharsets.US_ASCII));
    }

    /** Constant-time comparison with a presented header value; null never matches. */
    public boolean matches(String presented) {
        if (presented == null) {
            return false;
        }
        return MessageDigest.isEqual(value, presented.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public String toString() {
        return "ApiKey[<redacted>]";
    }
}
