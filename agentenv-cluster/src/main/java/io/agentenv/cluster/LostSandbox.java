package io.agentenv.cluster;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * A sandbox that was running on a node declared dead: it no longer exists anywhere, and the cluster remembers why.
 *
 * @param sandboxId the sandbox's id
 * @param node the node it ran on
 * @param templateId its template
 * @param state the state it was in when its node died
 * @param metadata its metadata (for hooks and listings)
 * @param instanceId its runtime instance as the custom extension knew it (its stop hook is called with it)
 * @param reason why it was lost
 * @param lostAt when the death was declared (the database's clock)
 */
public record LostSandbox(
        String sandboxId,
        NodeId node,
        String templateId,
        String state,
        Map<String, String> metadata,
        Optional<UUID> instanceId,
        String reason,
        Instant lostAt) {
    public LostSandbox {
        requireNonNull(sandboxId, "sandboxId is null");
        requireNonNull(node, "node is null");
        requireNonNull(templateId, "templateId is null");
        requireNonNull(state, "state is null");
        metadata = Map.copyOf(requireNonNull(metadata, "metadata is null"));
        requireNonNull(instanceId, "instanceId is null");
        requireNonNull(reason, "reason is null");
        requireNonNull(lostAt, "lostAt is null");
    }
}
