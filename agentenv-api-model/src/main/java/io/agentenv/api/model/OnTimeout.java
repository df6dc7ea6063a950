package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonValue;

/** {@code lifecycle.onTimeout} in {@link SandboxDetail}. */
public enum OnTimeout {
    PAUSE("pause"),
    KILL("kill");

    private final String wire;

    OnTimeout(String wire) {
        this.wire = wire;
    }

    @JsonValue
    public String wire() {
        return wire;
    }
}
