package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.util.Optional;

/**
 * How the host reaches the guest agent (envd) of a running sandbox: a TCP address and/or a unix socket on the host.
 *
 * @param host       host name or IP address the host can connect to, with {@code port}
 * @param port       TCP port of envd as seen from the host
 * @param unixSocket a unix socket on the host forwarding to envd, when the backend offers one
 */
public record GuestEndpoint(String host, int port, Optional<Path> unixSocket) {
    public GuestEndpoint {
        requireNonNull(host, "host is null");
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
        requireNonNull(unixSocket, "unixSocket is null");
    }
}
