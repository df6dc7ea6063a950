package io.agentenv.server.gateway;

import static java.util.Objects.requireNonNull;

/** Where {@link GatewayRoutes} sends a request. */
sealed interface GatewayRoute {
    /** {@code GET /health}: the gateway answers itself. */
    record Health() implements GatewayRoute {}

    /** {@code GET /nodes}. */
    record ListNodes() implements GatewayRoute {}

    /** {@code GET /nodes/{nodeID}}. */
    record ShowNode(String nodeId) implements GatewayRoute {
        public ShowNode {
            requireNonNull(nodeId, "nodeId is null");
        }
    }

    /** {@code POST /nodes/{nodeID}}: drain or undrain. */
    record ChangeNode(String nodeId) implements GatewayRoute {
        public ChangeNode {
            requireNonNull(nodeId, "nodeId is null");
        }
    }

    /**
     * A request for one sandbox (a control-plane path naming it, or traffic for one of its ports): it goes to the node
     * that owns the sandbox. {@code mayResume}: the request may resume a paused sandbox, so a paused sandbox whose
     * node cannot take it may be placed on another node. {@code traffic}: for one of the sandbox's ports (the node's
     * proxy), not the control plane.
     */
    record Owned(String sandboxId, boolean mayResume, boolean traffic) implements GatewayRoute {
        public Owned {
            requireNonNull(sandboxId, "sandboxId is null");
        }
    }

    /**
     * A signed envd {@code /files} URL ({@code pathAndQuery}): it names no sandbox, so the gateway finds the running
     * sandbox whose token signed it and sends it to that sandbox's owner.
     */
    record Signed(String pathAndQuery) implements GatewayRoute {
        public Signed {
            requireNonNull(pathAndQuery, "pathAndQuery is null");
        }
    }

    /** {@code POST /sandboxes}: placed on a node. */
    record Create() implements GatewayRoute {}

    /**
     * A request about one template or volume whose files live on one node's disk (uploads, builds, content): sent to
     * the same node for the same key while the cluster's nodes do not change.
     */
    record Keyed(String key) implements GatewayRoute {
        public Keyed {
            requireNonNull(key, "key is null");
        }
    }

    /** Anything every node answers alike (lists and catalogs read from the cluster's database). */
    record AnyNode() implements GatewayRoute {}

    /** Unusable routing information. */
    record Refused(int status, String message) implements GatewayRoute {
        public Refused {
            requireNonNull(message, "message is null");
        }
    }
}
