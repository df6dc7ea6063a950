package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** Body of {@code POST /sandboxes/{id}/pause}: {@code memory} (default true) keeps the memory image. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record PauseSandbox(Boolean memory) {
    public boolean memoryOrDefault() {
        return memory == null || memory;
    }
}
