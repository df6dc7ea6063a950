package io.agentenv.server.gateway;

import static java.util.Objects.requireNonNull;

import io.agentenv.server.credentials.ApiKey;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

/**
 * What a gateway needs besides the cluster's database.
 *
 * @param listen where it serves
 * @param apiKey the cluster's API key (the node routes need it; every node checks it on what is forwarded)
 * @param sandboxDomains the domains of {@code <port>-<id>.<domain>} sandbox hosts (empty: any domain)
 * @param maxConcurrentRequests requests handled at once
 * @param maxCreateBytes largest create body (a create is read whole to place it)
 * @param connectTimeout connecting to a node
 * @param requestTimeout a create, and a WebSocket handshake, from sending to the node's answer
 * @param ownerTtl how long a sandbox's owner is remembered
 * @param nodeRefresh how often the node list is read again
 */
public record GatewaySettings(
        InetSocketAddress listen,
        ApiKey apiKey,
        List<String> sandboxDomains,
        int maxConcurrentRequests,
        int maxCreateBytes,
        Duration connectTimeout,
        Duration requestTimeout,
        Duration ownerTtl,
        Duration nodeRefresh) {
    public GatewaySettings {
        requireNonNull(listen, "listen is null");
        requireNonNull(apiKey, "apiKey is null");
        sandboxDomains = List.copyOf(sandboxDomains);
        requireNonNull(connectTimeout, "connectTimeout is null");
        requireNonNull(requestTimeout, "requestTimeout is null");
        requireNonNull(ownerTtl, "ownerTtl is null");
        requireNonNull(nodeRefresh, "nodeRefresh is null");
        if (maxConcurrentRequests < 1 || maxCreateBytes < 1024) {
            throw new IllegalArgumentException("maxConcurrentRequests must be >= 1 and maxCreateBytes >= 1024");
        }
    }

    /** The defaults around a listen address, a key, the sandbox domains and how many requests run at once. */
    public static GatewaySettings defaults(
            InetSocketAddress listen, ApiKey apiKey, List<String> sandboxDomains, int maxConcurrentRequests) {
        return new GatewaySettings(
                listen,
                apiKey,
                sandboxDomains,
                maxConcurrentRequests,
                1 << 20,
                Duration.ofSeconds(2),
                Duration.ofSeconds(120),
                Duration.ofSeconds(1),
                Duration.ofMillis(500));
    }
}
