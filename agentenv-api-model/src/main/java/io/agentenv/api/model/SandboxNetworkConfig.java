package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * {@code network} in create requests and in {@link SandboxDetail}: egress rules ({@code allowOut}/{@code denyOut}:
 * CIDRs or IPs), whether the sandbox's ports are reachable without a traffic token ({@code allowPublicTraffic},
 * default true) and {@code maskRequestHost} (accepted, ignored).
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SandboxNetworkConfig(Boolean allowPublicTraffic, List<String> allowOut, List<String> denyOut,
                                   String maskRequestHost) {
    public SandboxNetworkConfig {
        allowOut = WireChecks.stringList(allowOut, "network.allowOut");
        denyOut = WireChecks.stringList(denyOut, "network.denyOut");
    }

    public boolean allowPublicTrafficOrDefault() {
        return allowPublicTraffic == null || allowPublicTraffic;
    }
}
