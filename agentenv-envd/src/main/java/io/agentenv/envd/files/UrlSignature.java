package io.agentenv.envd.files;

import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Locale;
import java.util.OptionalLong;

/**
 * E2B's v1 signatures for {@code /files} URLs that work without the access token:
 * {@code "v1_" + base64(sha256("<path>:<read|write>:<username>:<token>[:<expiration>]"))} without padding, where
 * {@code path} and {@code username} are exactly the query values (empty username for the default user) and
 * {@code expiration} is in Unix seconds.
 */
final class UrlSignature {
    /** What the URL allows. */
    enum Operation {
        READ,
        WRITE;

        String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private UrlSignature() {}

    static String sign(String path, Operation operation, String username, String token, OptionalLong expiration) {
        requireNonNull(path, "path is null");
        requireNonNull(operation, "operation is null");
        requireNonNull(username, "username is null");
        requireNonNull(token, "token is null");
        String raw = path + ":" + operation.wireName() + ":" + username + ":" + token
                + (expiration.isPresent() ? ":" + expiration.getAsLong() : "");
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(raw.getBytes(StandardCharsets.UTF_8));
            return "v1_" + Base64.getEncoder().withoutPadding().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK always has SHA-256", e);
        }
    }

    /** Constant-time comparison of a presented signature with the expected one. */
    static boolean matches(String expected, String presented) {
        return MessageDigest.isEqual(
                expected.getBytes(StandardCharsets.UTF_8), presented.getBytes(StandardCharsets.UTF_8));
    }
}
