package io.agentenv.server.proxy;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * How the sandbox proxy behaves.
 *
 * @param domains           host routing domains: a Host {@code <port>-<sandboxId>.<domain>} is proxied (lowercase,
 *                          compared exactly; a domain with a port matches only that port)
 * @param envdPort          the guest port envd listens on (E2B: 49983); requests to it go to the backend's envd endpoint
 * @param connectTimeout    upstream TCP connect
 * @param headersTimeout    from sending the upstream request until its response headers arrive (then 504)
 * @param idleTimeout       an upstream connection with no bytes either way for this long is closed (streams carry
 *                          keepalives well inside it)
 * @param autoResumeTimeout how long a request waits for an auto-resume before 504
 * @param autoResumeTtl     the TTL an auto-resumed sandbox gets at least
 */
public record ProxySettings(
        List<String> domains,
        int envdPort,
        Duration connectTimeout,
        Duration headersTimeout,
        Duration idleTimeout,
        Duration autoResumeTimeout,
        Duration autoResumeTtl) {
    public static final int ENVD_PORT = 49983;

    public ProxySettings {
        domains =
                domains.stream().map(d -> stripDot(d.toLowerCase(Locale.ROOT))).toList();
        if (envdPort < 1 || envdPort > 65535) {
            throw new IllegalArgumentException("envdPort out of range: " + envdPort);
        }
        positive(connectTimeout, "connectTimeout");
        positive(headersTimeout, "headersTimeout");
        positive(idleTimeout, "idleTimeout");
        positive(autoResumeTimeout, "autoResumeTimeout");
        positive(autoResumeTtl, "autoResumeTtl");
    }

    /** The reference's values: connect 5 s, headers 30 s, auto-resume 60 s with at least 300 s TTL; idle 330 s. */
    public static ProxySettings defaults(List<String> domains) {
        return new ProxySettings(
                domains,
                ENVD_PORT,
                Duration.ofSeconds(5),
                Duration.ofSeconds(30),
                Duration.ofSeconds(330),
                Duration.ofSeconds(60),
                Duration.ofSeconds(300));
    }

    private static String stripDot(String domain) {
        String d = domain.endsWith(".") ? domain.substring(0, domain.length() - 1) : domain;
        if (d.isEmpty()) {
            throw new IllegalArgumentException("empty proxy domain");
        }
        return d;
    }

    private static void positive(Duration d, String name) {
        requireNonNull(d, name + " is null");
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be > 0: " + d);
        }
    }
}
