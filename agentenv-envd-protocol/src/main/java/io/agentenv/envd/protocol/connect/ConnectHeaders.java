package io.agentenv.envd.protocol.connect;

import java.time.Duration;
import java.util.Optional;

/** Names and parsing of the Connect request headers envd honours. */
public final class ConnectHeaders {
    public static final String PROTOCOL_VERSION = "Connect-Protocol-Version";
    public static final String TIMEOUT_MS = "Connect-Timeout-Ms";
    /** E2B's extension: seconds between keepalive events on a quiet stream. */
    public static final String KEEPALIVE_PING_INTERVAL = "Keepalive-Ping-Interval";

    private ConnectHeaders() {}

    /** {@code Connect-Timeout-Ms}: at most 10 ASCII digits; absent means no deadline. */
    public static Optional<Duration> timeout(String value) {
        if (value == null || value.isEmpty()) {
            return Optional.empty();
        }
        if (value.length() > 10 || !value.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw RpcException.invalidArgument("invalid " + TIMEOUT_MS + " header: " + value);
        }
        return Optional.of(Duration.ofMillis(Long.parseLong(value)));
    }

    /** {@code Keepalive-Ping-Interval} in seconds; absent, malformed or non-positive means {@code fallback}. */
    public static Duration keepaliveInterval(String value, Duration fallback) {
        if (value == null || value.isBlank()) {
            return fallback;
        }
        try {
            long seconds = Long.parseLong(value.strip());
            return seconds > 0 ? Duration.ofSeconds(seconds) : fallback;
        } catch (NumberFormatException e) {
            return fallback;
        }
    }
}
