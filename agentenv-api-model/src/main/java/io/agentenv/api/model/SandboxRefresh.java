package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** Body of {@code POST /sandboxes/{id}/refreshes}: extend the TTL to at least {@code duration} seconds (0..3600). */
@JsonIgnoreProperties(ignoreUnknown = true)
public record SandboxRefresh(Integer duration) {
    public static final int MAX_DURATION_SECONDS = 3600;

    public SandboxRefresh {
        WireChecks.inRange(duration, "duration", 0, MAX_DURATION_SECONDS);
    }
}
