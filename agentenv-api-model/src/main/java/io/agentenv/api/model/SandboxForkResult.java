package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;

/** One child of {@code POST /sandboxes/{id}/fork}: exactly one of {@code sandbox} and {@code error}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SandboxForkResult(Sandbox sandbox, ApiError error) {
    public SandboxForkResult {
        if ((sandbox == null) == (error == null)) {
            throw new IllegalArgumentException("exactly one of sandbox and error must be set");
        }
    }

    public static SandboxForkResult of(Sandbox sandbox) {
        return new SandboxForkResult(sandbox, null);
    }

    public static SandboxForkResult of(ApiError error) {
        return new SandboxForkResult(null, error);
    }
}
