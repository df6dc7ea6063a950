package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.GuestEndpoint;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.SandboxId;
import java.util.Optional;

/**
 * What the sandbox proxy needs for one request, read from memory ({@link Orchestrator#route}): the sandbox's state, its
 * guest endpoint while RUNNING with a live instance, and its access rules (fixed at create).
 *
 * @param endpoint      present only while RUNNING with a live instance
 * @param secure        envd's port needs the sandbox's envd access token
 * @param publicTraffic whether other ports need the traffic access token
 * @param autoResume    a paused sandbox is resumed by its first proxied request
 * @param maskRequestHost the Host header requests to ports other than envd's carry, {@code ${PORT}} not yet replaced
 */
public record GuestRoute(
        SandboxId id,
        SandboxState state,
        Optional<GuestEndpoint> endpoint,
        boolean secure,
        NetworkPolicy.PublicTraffic publicTraffic,
        boolean autoResume,
        Optional<String> maskRequestHost) {
    public GuestRoute {
        requireNonNull(id, "id is null");
        requireNonNull(state, "state is null");
        requireNonNull(endpoint, "endpoint is null");
        requireNonNull(publicTraffic, "publicTraffic is null");
        requireNonNull(maskRequestHost, "maskRequestHost is null");
        if (endpoint.isPresent() && state != SandboxState.RUNNING) {
            throw new IllegalArgumentException("an endpoint is only routed to while RUNNING, not " + state);
        }
    }

    /** A route whose requests keep their Host header. */
    public GuestRoute(
            SandboxId id,
            SandboxState state,
            Optional<GuestEndpoint> endpoint,
            boolean secure,
            NetworkPolicy.PublicTraffic publicTraffic,
            boolean autoResume) {
        this(id, state, endpoint, secure, publicTraffic, autoResume, Optional.empty());
    }
}
