package io.agentenv.backend.container.network;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;

/**
 * One pre-created network namespace: a veth pair whose host end has {@code hostAddress}/30 and whose sandbox end is
 * eth0 with {@code sandboxAddress}/30 and a default route through the host (NAT'd by the host setup's rules).
 */
public record NetSlot(int index, String netnsName, String hostVeth, String hostAddress, String sandboxAddress) {

    public NetSlot {
        requireNonNull(netnsName, "netnsName is null");
        requireNonNull(hostVeth, "hostVeth is null");
        requireNonNull(hostAddress, "hostAddress is null");
        requireNonNull(sandboxAddress, "sandboxAddress is null");
        if (hostVeth.length() > 15) {
            throw new IllegalArgumentException("interface names are at most 15 characters: " + hostVeth);
        }
    }

    /** What a container's config names in linux.namespaces to join it. */
    public Path netnsPath() {
        return NetnsPool.NETNS_DIR.resolve(netnsName);
    }
}
