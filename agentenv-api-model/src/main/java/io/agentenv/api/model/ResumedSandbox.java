package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** Body of the deprecated {@code POST /sandboxes/{id}/resume}: timeout in seconds, default 15; autoPause ignored. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record ResumedSandbox(Integer timeout, Boolean autoPause) {
    public static final int DEFAULT_TIMEOUT_SECONDS = 15;

    public ResumedSandbox {
        WireChecks.nonNegative(timeout, "timeout");
    }
}
