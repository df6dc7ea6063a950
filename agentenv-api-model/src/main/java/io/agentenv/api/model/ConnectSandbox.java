package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * Body of {@code POST /sandboxes/{id}/connect} and {@code POST /v2/sandboxes/{id}/connect}: the timeout in seconds
 * (required in v1, optional in v2 with default {@link #DEFAULT_V2_TIMEOUT_SECONDS}). Other fields (for example
 * {@code memory}) are ignored.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record ConnectSandbox(Integer timeout) {
    public static final int DEFAULT_V2_TIMEOUT_SECONDS = 300;

    public ConnectSandbox {
        WireChecks.nonNegative(timeout, "timeout");
    }
}
