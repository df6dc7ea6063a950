package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/**
 * Body of {@code PUT /sandboxes/{id}/network}: replaces the whole egress policy (an empty body clears it).
 * {@code allow_internet_access} is snake_case as in create requests. {@code egressProxy} and {@code rules} are read
 * so that the server can refuse them by name; they are written only when present.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record SandboxNetworkUpdateConfig(
        List<String> allowOut,
        List<String> denyOut,
        @JsonProperty("allow_internet_access") Boolean allowInternetAccess,
        @JsonInclude(JsonInclude.Include.NON_NULL) Map<String, Object> egressProxy,
        @JsonInclude(JsonInclude.Include.NON_NULL) Map<String, Object> rules) {

    public SandboxNetworkUpdateConfig {
        allowOut = WireChecks.stringList(allowOut, "allowOut");
        denyOut = WireChecks.stringList(denyOut, "denyOut");
        egressProxy = WireChecks.jsonObject(egressProxy);
        rules = WireChecks.jsonObject(rules);
    }

    /** The egress lists and internet access only. */
    public SandboxNetworkUpdateConfig(List<String> allowOut, List<String> denyOut, Boolean allowInternetAccess) {
        this(allowOut, denyOut, allowInternetAccess, null, null);
    }
}
