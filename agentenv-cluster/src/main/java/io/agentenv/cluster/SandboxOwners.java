package io.agentenv.cluster;

import static java.util.Objects.requireNonNull;

import java.util.Optional;

/** Which node holds a sandbox: what a gateway asks before it forwards a sandbox's request or bytes. Thread-safe. */
public interface SandboxOwners {
    /** The sandbox's owner now; empty when there is no such sandbox (never created, deleted, or lost). */
    Optional<Ownership> owner(String sandboxId);

    /** Lost sandboxes are remembered: empty when {@code sandboxId} was never lost. */
    Optional<LostSandbox> lost(String sandboxId);

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
