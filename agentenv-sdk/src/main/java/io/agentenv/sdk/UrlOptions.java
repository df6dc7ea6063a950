package io.agentenv.sdk;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Options of {@link Sandbox#uploadUrl} and {@link Sandbox#downloadUrl}.
 *
 * @param user                the user the file is read or written as (default: the sandbox's default user)
 * @param signatureExpiration how long the signed URL stays valid (empty: it does not expire)
 */
public record UrlOptions(Optional<String> user, Optional<Duration> signatureExpiration) {
    /** Checks the fields. */
    public UrlOptions {
        Objects.requireNonNull(user, "user");
        Objects.requireNonNull(signatureExpiration, "signatureExpiration");
        signatureExpiration.ifPresent(d -> {
            if (d.isNegative() || d.isZero()) {
                throw new InvalidArgumentException("signatureExpiration must be positive: " + d);
            }
        });
    }

    /** The defaults: default user, no expiry. */
    public static UrlOptions defaults() {
        return new UrlOptions(Optional.empty(), Optional.empty());
    }

    /** This with a user. */
    public UrlOptions withUser(String user) {
        return new UrlOptions(Optional.of(user), signatureExpiration);
    }

    /** This with an expiry. */
    public UrlOptions withExpiration(Duration expiration) {
        return new UrlOptions(user, Optional.of(expiration));
    }
}
