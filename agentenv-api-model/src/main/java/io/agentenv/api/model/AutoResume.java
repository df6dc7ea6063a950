package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** {@code autoResume} in create requests: {@code {"enabled": bool}}. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record AutoResume(Boolean enabled) {
    public boolean enabledOrDefault() {
        return enabled != null && enabled;
    }
}
