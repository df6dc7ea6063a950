package io.agentenv.server.config;

import static java.util.Objects.requireNonNull;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A gateway's configuration ({@code agentenv-server gateway}), read like the server's (environment, then the file in
 * {@code AENV_CONFIG}).
 *
 * @param listen where it serves ({@code AENV_LISTEN}, default {@code 0.0.0.0:3000})
 * @param apiKey the cluster's API key ({@code AENV_API_KEY}, required: every node and gateway of a cluster shares it)
 * @param sandboxDomain the domain of sandbox hosts, as the nodes are given it ({@code AENV_SANDBOX_DOMAIN})
 * @param database the cluster's database ({@code AENV_CLUSTER_DATABASE_*}, required)
 * @param maxConcurrentRequests requests handled at once ({@code AENV_MAX_CONCURRENT_REQUESTS}, default 1024)
 */
public record GatewayConfig(
        InetSocketAddress listen,
        String apiKey,
        Optional<String> sandboxDomain,
        ClusterDatabase database,
        int maxConcurrentRequests) {
    /** Every key a gateway reads (a deployment may set these; the deployment files' test checks them). */
    public static final Set<String> KEYS = Set.of(
            ServerConfig.CONFIG,
            ServerConfig.LISTEN,
            ServerConfig.API_KEY,
            ServerConfig.SANDBOX_DOMAIN,
            ServerConfig.MAX_CONCURRENT_REQUESTS,
            ClusterDatabase.URL,
            ClusterDatabase.USER,
            ClusterDatabase.PASSWORD_FILE);

    public GatewayConfig {
        requireNonNull(listen, "listen is null");
        requireNonNull(apiKey, "apiKey is null");
        requireNonNull(sandboxDomain, "sandboxDomain is null");
        requireNonNull(database, "database is null");
    }

    @Override
    public String toString() {
        return "GatewayConfig[listen=" + listen + ", sandboxDomain=" + sandboxDomain + ", database=" + database + "]";
    }

    /** Reads the environment (and the file it names); fails fast on a missing or bad value. */
    public static GatewayConfig load(Map<String, String> env) {
        Map<String, String> values = ServerConfig.values(env);
        String apiKey = values.get(ServerConfig.API_KEY);
        if (apiKey == null) {
            throw new IllegalArgumentException(
                    "a gateway needs the cluster's API key in " + ServerConfig.API_KEY + " (the nodes' key)");
        }
        ClusterDatabase database = ClusterDatabase.from(values)
                .orElseThrow(() -> new IllegalArgumentException("a gateway needs " + ClusterDatabase.URL));
        return new GatewayConfig(
                ServerConfig.parseListen(values.getOrDefault(ServerConfig.LISTEN, "0.0.0.0:3000")),
                apiKey,
                Optional.ofNullable(values.get(ServerConfig.SANDBOX_DOMAIN)),
                database,
                ServerConfig.parseInt(values, ServerConfig.MAX_CONCURRENT_REQUESTS, 1024));
    }
}
