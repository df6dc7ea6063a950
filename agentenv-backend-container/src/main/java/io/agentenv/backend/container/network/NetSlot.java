package io.agentenv.backend.container.network;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.HostLayout;
import java.nio.file.Path;

/**
 * One sandbox's network: the veth pair whose host end {@code hostVeth} has {@code hostAddress}/30 and whose sandbox end
 * is eth0 of the sandbox's own network namespace with {@code sandboxAddress}/30 and a default route through the host
 * (NAT'd by the host setup's rules). The sandbox's runtime makes that namespace (it belongs to the sandbox's user
 * namespace) and its hook makes the pair and pins the namespace at {@link #netnsPath()}, where it is found from then on
 * until the slot's release.
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

    /** Where the sandbox's network namespace is pinned once its runtime made it. */
    public Path netnsPath() {
        return HostLayout.NETNS_DIR.resolve(netnsName);
    }
}
