package io.agentenv.server.proxy;

import static java.util.Objects.requireNonNull;

/** What {@link RouteClassifier} made of a request: the API's, a sandbox's port, a signed file URL, or malformed. */
public sealed interface ProxyRoute {
    /** Not for the proxy: the control plane serves it. */
    record ControlPlane() implements ProxyRoute {}

    /**
     * For {@code port} of sandbox {@code sandboxId} (already checked to be a well-formed id), forwarding
     * {@code pathAndQuery} (the raw path, percent-encoding kept, plus {@code ?query} when present).
     */
    record Targeted(String sandboxId, int port, String pathAndQuery) implements ProxyRoute {
        public Targeted {
            requireNonNull(sandboxId, "sandboxId is null");
            requireNonNull(pathAndQuery, "pathAndQuery is null");
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port out of range: " + port);
            }
        }
    }

    /** A signed {@code /files} URL without any sandbox routing: the signature says which sandbox. */
    record SignedFiles(String pathAndQuery) implements ProxyRoute {
        public SignedFiles {
            requireNonNull(pathAndQuery, "pathAndQuery is null");
        }
    }

    /** Routing information that cannot be used (400). */
    record Malformed(String message) implements ProxyRoute {
        public Malformed {
            requireNonNull(message, "message is null");
        }
    }
}
