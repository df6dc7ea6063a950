package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * Body of the deprecated {@code POST /sandboxes/{id}/resume}: timeout in seconds, default 15; {@code autoPause}
 * (deprecated) and {@code memory} as E2B's schema has them.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record ResumedSandbox(Integer timeout, Boolean autoPause, Boolean memory) {
    public static final int DEFAULT_TIMEOUT_SECONDS = 15;

    public ResumedSandbox {
        WireChecks.nonNegative(timeout, "timeout");
    }
}
