package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonValue;

/** E2B schema {@code TemplateBuildStatus}. */
public enum TemplateBuildStatus {
    BUILDING("building"),
    WAITING("waiting"),
    READY("ready"),
    ERROR("error");

    private final String wire;

    TemplateBuildStatus(String wire) {
        this.wire = wire;
    }

    @JsonValue
    public String wire() {
        return wire;
    }
}
