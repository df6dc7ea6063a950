package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonUnwrapped;

/**
 * Body of {@code POST /sandboxes} (v1, used by SDKs up to 2.50): the shared {@link SandboxCreateFields}, default
 * timeout 15 s, the {@code secure} flag and {@code autoPauseMemory} (as in v2). Fields in no schema are ignored.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record NewSandbox(@JsonUnwrapped SandboxCreateFields fields, Boolean secure, Boolean autoPauseMemory)
        implements CreateSandboxRequest {

    public static final int DEFAULT_TIMEOUT_SECONDS = 15;

    public NewSandbox {
        requireNonNull(fields, "fields is null");
    }

    @Override
    public int defaultTimeoutSeconds() {
        return DEFAULT_TIMEOUT_SECONDS;
    }

    @Override
    public boolean secureOrDefault() {
        return secure != null && secure;
    }
}
