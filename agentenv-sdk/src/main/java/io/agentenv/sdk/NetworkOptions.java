package io.agentenv.sdk;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A sandbox's network at create time: egress rules (IPv4 addresses or CIDR blocks; an allowed entry wins over a denied
 * one) and whether its ports are reachable without a traffic token.
 *
 * @param allowOut           destinations always allowed
 * @param denyOut            destinations denied (e.g. {@code 0.0.0.0/0} for everything not allowed)
 * @param allowPublicTraffic whether its ports are public (empty: the server's default, true)
 */
public record NetworkOptions(List<String> allowOut, List<String> denyOut, Optional<Boolean> allowPublicTraffic) {
    /** Copies the lists. */
    public NetworkOptions {
        allowOut = List.copyOf(allowOut);
        denyOut = List.copyOf(denyOut);
        Objects.requireNonNull(allowPublicTraffic, "allowPublicTraffic");
    }

    /** Egress rules only. */
    public static NetworkOptions egress(List<String> allowOut, List<String> denyOut) {
        return new NetworkOptions(allowOut, denyOut, Optional.empty());
    }
}
