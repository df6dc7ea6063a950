package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * Body of {@code POST /sandboxes/{id}/connect} and {@code POST /v2/sandboxes/{id}/connect}: the timeout in seconds
 * (optional; the server applies its default, 300 s, when absent). Other fields (for example
 * {@code memory}) are ignored.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record ConnectSandbox(Integer timeout) {
    public ConnectSandbox {
        WireChecks.nonNegative(timeout, "timeout");
    }
}
