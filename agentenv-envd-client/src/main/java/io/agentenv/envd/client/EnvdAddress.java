package io.agentenv.envd.client;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.GuestEndpoint;
import java.nio.file.Path;

/** Where envd listens, as seen from the host: a unix socket on the host, or a TCP address. */
public sealed interface EnvdAddress {

    /** envd's TCP port at {@code host} (an IP address or a name the host resolves). */
    record Tcp(String host, int port) implements EnvdAddress {
        public Tcp {
            requireNonNull(host, "host is null");
            if (host.isBlank()) {
                throw new IllegalArgumentException("host is blank");
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port out of range: " + port);
            }
        }
    }

    /** A unix socket on the host that reaches envd. */
    record Unix(Path socket) implements EnvdAddress {
        public Unix {
            requireNonNull(socket, "socket is null");
            if (!socket.isAbsolute()) {
                throw new IllegalArgumentException("socket path must be absolute: " + socket);
            }
        }
    }

    /** The unix socket of {@code endpoint} when it has one (no network stack in between), else its TCP address. */
    static EnvdAddress of(GuestEndpoint endpoint) {
        requireNonNull(endpoint, "endpoint is null");
        return endpoint.unixSocket()
                .<EnvdAddress>map(Unix::new)
                .orElseGet(() -> new Tcp(endpoint.host(), endpoint.port()));
    }
}
