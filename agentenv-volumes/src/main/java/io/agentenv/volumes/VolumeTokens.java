package io.agentenv.volumes;

import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A volume's content token, derived and never stored: hex(HMAC-SHA256(seed, "volume-" + volumeId)) with the store's
 * persisted seed as the key (the sandbox tokens' seed, under a prefix of its own), so a token stays valid across
 * restarts and dies with the seed. Checked in constant time. Thread-safe.
 */
public final class VolumeTokens {
    private static final String ALGORITHM = "HmacSHA256";
    private static final String PREFIX = "volume-";

    private final SecretKeySpec key;

    public VolumeTokens(String seed) {
        requireNonNull(seed, "seed is null");
        if (seed.isEmpty()) {
            throw new IllegalArgumentException("seed is empty");
        }
        this.key = new SecretKeySpec(seed.getBytes(StandardCharsets.UTF_8), ALGORITHM);
    }

    public String token(String volumeId) {
        requireNonNull(volumeId, "volumeId is null");
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            return HexFormat.of().formatHex(mac.doFinal((PREFIX + volumeId).getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    /** Whether {@code presented} is the token of {@code volumeId}. */
    public boolean matches(String volumeId, String presented) {
        if (presented == null) {
            return false;
        }
        return MessageDigest.isEqual(
                token(volumeId).getBytes(StandardCharsets.UTF_8), presented.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public String toString() {
        return "VolumeTokens[seed=<redacted>]";
    }
}
