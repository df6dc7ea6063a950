package io.agentenv.backend.container.network;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;

/**
 * One sandbox's network, made ahead of time: a veth pair whose host end {@code hostVeth} has {@code hostAddress}/30
 * and whose sandbox end {@code guestVeth} waits in the host's namespace until the sandbox's runtime hook moves it into
 * the sandbox's own network namespace (which belongs to the sandbox's user namespace, so the runtime makes it) as eth0
 * with {@code sandboxAddress}/30 and a default route through the host (NAT'd by the host setup's rules). The hook
 * also pins that namespace at {@link #netnsPath()}, which is where it is found from then on until the slot's release.
 */
public record NetSlot(
        int index, String netnsName, String hostVeth, String guestVeth, String hostAddress, String sandboxAddress) {

    public NetSlot {
        requireNonNull(netnsName, "netnsName is null");
        requireNonNull(hostVeth, "hostVeth is null");
        requireNonNull(guestVeth, "guestVeth is null");
        requireNonNull(hostAddress, "hostAddress is null");
        requireNonNull(sandboxAddress, "sandboxAddress is null");
        if (hostVeth.length() > 15 || guestVeth.length() > 15) {
            throw new IllegalArgumentException(
                    "interface names are at most 15 characters: " + hostVeth + ", " + guestVeth);
        }
    }

    /** Where the sandbox's network namespace is pinned once its runtime made it. */
    public Path netnsPath() {
        return NetnsPool.NETNS_DIR.resolve(netnsName);
    }
}
