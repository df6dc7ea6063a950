package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** Body of {@code POST /sandboxes/{id}/timeout}: the new TTL in seconds from now (overwrites, may shorten). */
@JsonIgnoreProperties(ignoreUnknown = true)
public record SandboxTimeoutUpdate(Integer timeout) {
    public SandboxTimeoutUpdate {
        WireChecks.nonNegative(timeout, "timeout");
    }
}
