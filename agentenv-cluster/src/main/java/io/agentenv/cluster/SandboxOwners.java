package io.agentenv.cluster;

import static java.util.Objects.requireNonNull;

import java.util.Collection;
import java.util.Map;
import java.util.Optional;

/** Which node holds a sandbox: what a gateway asks before it forwards a sandbox's request or bytes. Thread-safe. */
public interface SandboxOwners {
    /** The sandbox's owner now; empty when there is no such sandbox (never created, deleted, or lost). */
    Optional<Ownership> owner(String sandboxId);

    /** Lost sandboxes are remembered: empty when {@code sandboxId} was never lost. */
    Optional<LostSandbox> lost(String sandboxId);

    /** The owners of {@code sandboxIds}, read at once; ids no sandbox has are left out. */
    Map<String, Ownership> owners(Collection<String> sandboxIds);

    /**
     * Every running sandbox's id and owner: a signed file URL names no sandbox, so its sandbox is found by trying
     * each running one's envd token, as a node's proxy does.
     */
    Map<String, NodeId> running();

    /** The cluster's token seed (every sandbox's tokens derive from it); empty while no node has stored one. */
    Optional<String> tokenSeed();

    /**
     * Where a sandbox lives.
     *
     * @param node the owning node; empty for a paused sandbox released by a dead node (any node may resume it)
     * @param paused whether it is paused (a resume may then be placed on another node)
     */
    record Ownership(Optional<NodeId> node, boolean paused) {
        public Ownership {
            requireNonNull(node, "node is null");
        }
    }
}
