package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * E2B schema {@code FromImageRegistry}: credentials for a build's base image. {@code type} {@code registry} carries a
 * user name and password; the {@code aws} and {@code gcp} kinds carry cloud credentials (their fields are not read).
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record FromImageRegistry(String type, String username, String password) {
    @Override
    public String toString() {
        return "FromImageRegistry[type=" + type + ", username=" + username + ", password=<redacted>]";
    }
}
