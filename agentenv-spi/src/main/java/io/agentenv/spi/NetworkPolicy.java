package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * A sandbox's network policy as the user asked for it. The orchestrator validates the entries (IP addresses and CIDR
 * blocks) before a backend sees a policy; the backend enforces it.
 *
 * @param internetAccess     the default for egress not matched by {@code allowOut} or {@code denyOut}
 * @param allowOut           addresses or CIDR blocks always reachable, even when {@code internetAccess} is DENIED
 * @param denyOut            addresses or CIDR blocks never reachable (allowOut wins over denyOut)
 * @param publicTraffic      whether requests from outside need the sandbox's traffic token
 */
public record NetworkPolicy(
        InternetAccess internetAccess, List<String> allowOut, List<String> denyOut, PublicTraffic publicTraffic) {
    /** No explicit rules: default internet access, public traffic allowed. */
    public static final NetworkPolicy DEFAULT =
            new NetworkPolicy(InternetAccess.DEFAULT, List.of(), List.of(), PublicTraffic.ALLOWED);

    public NetworkPolicy {
        requireNonNull(internetAccess, "internetAccess is null");
        requireNonNull(publicTraffic, "publicTraffic is null");
        allowOut = List.copyOf(allowOut);
        denyOut = List.copyOf(denyOut);
    }

    /** True when the policy carries explicit egress rules or restricts public traffic. */
    public boolean hasExplicitRules() {
        return !allowOut.isEmpty() || !denyOut.isEmpty() || publicTraffic == PublicTraffic.TOKEN_REQUIRED;
    }

    public enum InternetAccess {
        /** The user did not say: the deployment's default applies (allowed). */
        DEFAULT,
        ALLOWED,
        DENIED
    }

    public enum PublicTraffic {
        ALLOWED,
        /** Requests to sandbox ports need the traffic access token. */
        TOKEN_REQUIRED
    }
}
