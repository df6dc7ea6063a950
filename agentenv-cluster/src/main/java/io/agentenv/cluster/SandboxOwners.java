package io.agentenv.cluster;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Optional;

/** Which node holds a sandbox: what a gateway asks before it forwards a sandbox's request or bytes. Thread-safe. */
public interface SandboxOwners {
    /** The sandbox's owner now; empty when there is no such sandbox (never created, deleted, or lost). */
    Optional<Ownership> owner(String sandboxId);

    /** Lost sandboxes are remembered: empty when {@code sandboxId} was never lost. */
    Optional<LostSandbox> lost(String sandboxId);

    /**
     * The ids of the cluster's running sandboxes: a signed envd files URL names no sandbox, so a gateway finds the
     * one whose token signed it among these.
     */
    List<String> running();

    /** The cluster's token seed, from which any sandbox's tokens are derived; empty until a node has made it. */
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
