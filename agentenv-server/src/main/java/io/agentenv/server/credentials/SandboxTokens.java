package io.agentenv.server.credentials;

import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Derives per-sandbox tokens from the persisted seed, so they are never stored and forks get fresh ones:
 * envd access token = hex(HMAC-SHA256(seed, sandboxId)); traffic access token =
 * hex(HMAC-SHA256(seed, "sandbox-traffic-" + sandboxId)). The seed's UTF-8 bytes are the HMAC key. Thread-safe.
 */
public final class SandboxTokens {
    private static final String ALGORITHM = "HmacSHA256";
    private static final String TRAFFIC_PREFIX = "sandbox-traffic-";

    private final SecretKeySpec key;
    /**
     * Initialised with the key once and never used itself: each token is computed on a clone of it, which skips the
     * provider look-up and the key set-up (HMAC's padded key blocks) a {@code Mac.getInstance} + {@code init} costs
     * per call (a create derives the envd token twice). Null when the provider's Mac cannot be cloned.
     */
    private final Mac prototype;

    public SandboxTokens(String seed) {
        requireNonNull(seed, "seed is null");
        if (seed.isEmpty()) {
            throw new IllegalArgumentException("seed is empty");
        }
        this.key = new SecretKeySpec(seed.getBytes(StandardCharsets.UTF_8), ALGORITHM);
        this.prototype = cloneable(key);
    }

    /** Sent by clients as {@code X-Access-Token} to envd, and by the server to envd at init. */
    public String envdAccessToken(String sandboxId) {
        return hmacHex(requireNonNull(sandboxId, "sandboxId is null"));
    }

    /** Sent by clients as {@code e2b-traffic-access-token} to non-envd ports of private-ingress sandboxes. */
    public String trafficAccessToken(String sandboxId) {
        return hmacHex(TRAFFIC_PREFIX + requireNonNull(sandboxId, "sandboxId is null"));
    }

    private String hmacHex(String subject) {
        try {
            Mac mac = prototype != null ? (Mac) prototype.clone() : newMac(key); // Mac is not thread-safe: one per call
            return HexFormat.of().formatHex(mac.doFinal(subject.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException | CloneNotSupportedException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    private static Mac newMac(SecretKeySpec key) throws GeneralSecurityException {
        Mac mac = Mac.getInstance(ALGORITHM);
        mac.init(key);
        return mac;
    }

    private static Mac cloneable(SecretKeySpec key) {
        try {
            Mac mac = newMac(key);
            Object _ = mac.clone(); // a provider whose Mac cannot be cloned throws here, once
            return mac;
        } catch (CloneNotSupportedException e) {
            return null;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    @Override
    public String toString() {
        return "SandboxTokens[seed=<redacted>]";
    }
}
