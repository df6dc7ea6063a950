package io.agentenv.envd.connect;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.protocol.connect.WireFormat;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Function;

/**
 * What a handler knows about the call besides its message.
 *
 * @param procedure         e.g. {@code process.Process/Start}
 * @param basicAuthUser     the user named by {@code Authorization: Basic base64(user:)}, if any
 * @param deadline          from {@code Connect-Timeout-Ms}, if sent
 * @param keepaliveInterval from {@code Keepalive-Ping-Interval} (seconds), default 90 s
 * @param headers           raw request header lookup (case-insensitive); null when absent
 */
public record CallContext(
        String procedure,
        WireFormat format,
        Optional<String> basicAuthUser,
        Optional<Instant> deadline,
        Duration keepaliveInterval,
        Function<String, String> headers) {
    public CallContext {
        requireNonNull(procedure, "procedure is null");
        requireNonNull(format, "format is null");
        requireNonNull(basicAuthUser, "basicAuthUser is null");
        requireNonNull(deadline, "deadline is null");
        requireNonNull(keepaliveInterval, "keepaliveInterval is null");
        requireNonNull(headers, "headers is null");
        if (keepaliveInterval.isNegative() || keepaliveInterval.isZero()) {
            throw new IllegalArgumentException("keepaliveInterval must be positive");
        }
    }

    public String header(String name) {
        return headers.apply(name);
    }
}
