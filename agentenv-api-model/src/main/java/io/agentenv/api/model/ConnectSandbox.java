package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * Body of {@code POST /sandboxes/{id}/connect} and {@code POST /v2/sandboxes/{id}/connect}: the timeout in seconds
 * (optional; the server applies its default, 300 s, when absent) and {@code memory} (false: resume a paused sandbox
 * from its disk only, a cold boot; the SDK's {@code onResume: 'reboot'}), written only when present.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record ConnectSandbox(
        Integer timeout,
        @JsonInclude(JsonInclude.Include.NON_NULL) Boolean memory) {
    public ConnectSandbox {
        WireChecks.nonNegative(timeout, "timeout");
    }

    /** A connect with a timeout only. */
    public ConnectSandbox(Integer timeout) {
        this(timeout, null);
    }
}
