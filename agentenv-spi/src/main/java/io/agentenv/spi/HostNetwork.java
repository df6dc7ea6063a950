package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

import java.net.InetAddress;
import java.nio.file.Path;

/**
 * The host side of a prepared sandbox's network, as the custom extension's start hooks report it: the network
 * namespace the sandbox runs in and the address the host reaches it at. Known once
 * {@link SandboxBackendFactory#prepare} has returned (the network is reserved before anything runs) and may differ
 * between instances of one sandbox (for example after a resume).
 *
 * @param namespacePath      the network namespace's path on the host, for example {@code /var/run/netns/aenv-ns-3}
 * @param hostInteractionIp  the sandbox's address as seen from the host
 */
public record HostNetwork(Path namespacePath, InetAddress hostInteractionIp) {
    public HostNetwork {
        requireNonNull(namespacePath, "namespacePath is null");
        requireNonNull(hostInteractionIp, "hostInteractionIp is null");
        if (!namespacePath.isAbsolute()) {
            throw new IllegalArgumentException("namespacePath must be absolute: " + namespacePath);
        }
    }
}
