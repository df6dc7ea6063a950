package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** Body of {@code POST /sandboxes/{id}/fork}: {@code count} children (1..100, default 1), optional timeout seconds. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record SandboxForkRequest(Integer timeout, Integer count) {
    public static final int MAX_COUNT = 100;

    public SandboxForkRequest {
        WireChecks.nonNegative(timeout, "timeout");
        WireChecks.inRange(count, "count", 1, MAX_COUNT);
    }

    public int countOrDefault() {
        return count == null ? 1 : count;
    }
}
