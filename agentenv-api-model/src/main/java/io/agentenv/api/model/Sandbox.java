package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * A created, connected, resumed or forked sandbox (E2B schema {@code Sandbox}). {@code domain} and
 * {@code trafficAccessToken} are always present (null when unset); {@code alias} and {@code envdAccessToken} are
 * omitted when absent. {@code clientID} is the empty string (kept for the Python SDK).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Sandbox(
        @JsonProperty("templateID") String templateID,
        @JsonProperty("sandboxID") String sandboxID,
        String alias,
        @JsonProperty("clientID") String clientID,
        String envdVersion,
        String envdAccessToken,
        @JsonInclude(JsonInclude.Include.ALWAYS) String trafficAccessToken,
        @JsonInclude(JsonInclude.Include.ALWAYS) String domain) {

    public Sandbox {
        requireNonNull(templateID, "templateID is null");
        requireNonNull(sandboxID, "sandboxID is null");
        requireNonNull(clientID, "clientID is null");
        requireNonNull(envdVersion, "envdVersion is null");
    }

    @Override
    public String toString() {
        return "Sandbox[sandboxID=" + sandboxID + ", templateID=" + templateID + ", envdAccessToken=<redacted>]";
    }
}
