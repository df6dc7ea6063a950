package io.agentenv.envd.client;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * Timeouts and limits of the envd client.
 *
 * @param connectTimeout   establishing one connection
 * @param callTimeout      one call, from sending the request to the last byte of the answer
 * @param probeTimeout     one {@code /health} probe of {@link EnvdClient#waitUntilHealthy}
 * @param pollInterval     the pause between two failed probes
 * @param idleTimeout      a pooled keep-alive connection unused this long is closed
 * @param maxConnections   connections per client (one client per runtime generation)
 * @param maxResponseBytes an answer larger than this is rejected (log pages are the largest)
 */
public record EnvdClientSettings(
        Duration connectTimeout,
        Duration callTimeout,
        Duration probeTimeout,
        Duration pollInterval,
        Duration idleTimeout,
        int maxConnections,
        int maxResponseBytes) {
    /** 1 s connect, 10 s per call, 1 s per probe every 5 ms, 30 s idle, 8 connections, 16 MiB answers. */
    public static final EnvdClientSettings DEFAULTS = new EnvdClientSettings(
            Duration.ofSeconds(1),
            Duration.ofSeconds(10),
            Duration.ofSeconds(1),
            Duration.ofMillis(5),
            Duration.ofSeconds(30),
            8,
            16 * 1024 * 1024);

    public EnvdClientSettings {
        positive(connectTimeout, "connectTimeout");
        positive(callTimeout, "callTimeout");
        positive(probeTimeout, "probeTimeout");
        positive(pollInterval, "pollInterval");
        positive(idleTimeout, "idleTimeout");
        if (maxConnections < 1) {
            throw new IllegalArgumentException("maxConnections must be >= 1, got " + maxConnections);
        }
        if (maxResponseBytes < 1024) {
            throw new IllegalArgumentException("maxResponseBytes must be >= 1024, got " + maxResponseBytes);
        }
    }

    private static void positive(Duration value, String name) {
        requireNonNull(value, name + " is null");
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
    }
}
