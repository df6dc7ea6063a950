package io.agentenv.sdk;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A running sandbox's new egress policy ({@link Sandbox#updateNetwork}); it replaces the whole policy: what is left
 * out is cleared.
 *
 * @param allowOut            destinations always allowed (IPv4 addresses or CIDR blocks)
 * @param denyOut             destinations denied
 * @param allowInternetAccess whether anything not listed is reachable (empty: unchanged default, true)
 */
public record NetworkUpdate(List<String> allowOut, List<String> denyOut, Optional<Boolean> allowInternetAccess) {
    /** Copies the lists. */
    public NetworkUpdate {
        allowOut = List.copyOf(allowOut);
        denyOut = List.copyOf(denyOut);
        Objects.requireNonNull(allowInternetAccess, "allowInternetAccess");
    }

    /** Egress rules, internet access left at its default. */
    public static NetworkUpdate of(List<String> allowOut, List<String> denyOut) {
        return new NetworkUpdate(allowOut, denyOut, Optional.empty());
    }
}
