package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * Body of {@code PUT /sandboxes/{id}/network}: replaces the whole egress policy (an empty body clears it).
 * {@code allow_internet_access} is snake_case as in create requests.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record SandboxNetworkUpdateConfig(
        List<String> allowOut,
        List<String> denyOut,
        @JsonProperty("allow_internet_access") Boolean allowInternetAccess) {

    public SandboxNetworkUpdateConfig {
        allowOut = WireChecks.stringList(allowOut, "allowOut");
        denyOut = WireChecks.stringList(denyOut, "denyOut");
    }
}
