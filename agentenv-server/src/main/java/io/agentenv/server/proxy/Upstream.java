package io.agentenv.server.proxy;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.SandboxId;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Where one request goes: {@code host:port} (or a unix socket on the host, for envd), the path and query to send, the
 * connection-pool tag of the sandbox's current runtime generation, and whether the caller's {@code X-Access-Token}
 * was valid (only then is it forwarded), and the Host header to send instead of the caller's (the sandbox's
 * {@code maskRequestHost} with the port filled in; empty: the caller's Host is forwarded).
 */
record Upstream(
        SandboxId sandbox,
        int sandboxPort,
        String host,
        int port,
        Optional<Path> unixSocket,
        String pathAndQuery,
        Generations.Tag tag,
        boolean forwardAccessToken,
        Optional<String> hostHeader) {
    Upstream {
        requireNonNull(sandbox, "sandbox is null");
        requireNonNull(host, "host is null");
        requireNonNull(unixSocket, "unixSocket is null");
        requireNonNull(pathAndQuery, "pathAndQuery is null");
        requireNonNull(tag, "tag is null");
        requireNonNull(hostHeader, "hostHeader is null");
    }
}
