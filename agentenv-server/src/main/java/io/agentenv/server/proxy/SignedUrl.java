package io.agentenv.server.proxy;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

import java.net.URLDecoder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The query of a signed envd {@code /files} URL (E2B's {@code uploadUrl}/{@code downloadUrl}):
 * {@code signature = "v1_" + base64(sha256("<path>:<read|write>:<username>:<envdAccessToken>[:<expiration>]"))}
 * without padding. Only the query values are read, never the request's other parts.
 */
public record SignedUrl(String path, String username, String signature, Optional<Long> expiration) {
    static final String PREFIX = "v1_";

    public SignedUrl {
        requireNonNull(path, "path is null");
        requireNonNull(username, "username is null");
        requireNonNull(signature, "signature is null");
        requireNonNull(expiration, "expiration is null");
    }

    static boolean hasSignature(String rawQuery) {
        return rawQuery.startsWith("signature=") || rawQuery.contains("&signature=");
    }

    /** Empty when the query has no {@code signature} (or a malformed expiration). */
    public static Optional<SignedUrl> parse(String rawQuery) {
        if (rawQuery == null || rawQuery.isEmpty()) {
            return Optional.empty();
        }
        Map<String, String> values = new HashMap<>();
        for (String pair : rawQuery.split("&")) {
            int eq = pair.indexOf('=');
            String key = decode(eq < 0 ? pair : pair.substring(0, eq));
            String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
            if (key == null || value == null) {
                return Optional.empty();
            }
            values.putIfAbsent(key, value);
        }
        String signature = values.get("signature");
        if (signature == null || !signature.startsWith(PREFIX)) {
            return Optional.empty();
        }
        Optional<Long> expiration = Optional.empty();
        String exp = values.get("signature_expiration");
        if (exp != null) {
            try {
                expiration = Optional.of(Long.parseLong(exp));
            } catch (NumberFormatException e) {
                return Optional.empty();
            }
        }
        return Optional.of(new SignedUrl(
                values.getOrDefault("path", ""), values.getOrDefault("username", ""), signature, expiration));
    }

    /** The operation a method stands for: GET reads, POST writes; anything else cannot be signed. */
    public static Optional<String> operation(String method) {
        return switch (method) {
            case "GET" -> Optional.of("read");
            case "POST" -> Optional.of("write");
            default -> Optional.empty();
        };
    }

    /** True when the signature was made with {@code envdAccessToken} for {@code operation} (constant-time compare). */
    public boolean signedWith(String envdAccessToken, String operation) {
        String raw = path + ":" + operation + ":" + username + ":" + envdAccessToken
                + expiration.map(e -> ":" + e).orElse("");
        String expected = PREFIX + Base64.getEncoder().withoutPadding().encodeToString(sha256(raw));
        return MessageDigest.isEqual(expected.getBytes(UTF_8), signature.getBytes(UTF_8));
    }

    boolean expired(Instant now) {
        return expiration.isPresent() && expiration.get() < now.getEpochSecond();
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }

    private static String decode(String text) {
        try {
            return URLDecoder.decode(text, UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
