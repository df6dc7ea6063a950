package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * {@code network} in create requests and in {@link SandboxDetail}: egress rules ({@code allowOut}/{@code denyOut}:
 * CIDRs or IPs), whether the sandbox's ports are reachable without a traffic token ({@code allowPublicTraffic},
 * default true), {@code maskRequestHost} (the Host header the proxy sends to the sandbox's ports, {@code ${PORT}}
 * replaced by the port). {@code egressProxy}, {@code rules} and {@code httpsPorts} are read so that the server can
 * refuse them by name; they are written only when present.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SandboxNetworkConfig(
        Boolean allowPublicTraffic,
        List<String> allowOut,
        List<String> denyOut,
        String maskRequestHost,
        Map<String, Object> egressProxy,
        Map<String, Object> rules,
        List<Integer> httpsPorts) {
    public SandboxNetworkConfig {
        allowOut = WireChecks.stringList(allowOut, "network.allowOut");
        denyOut = WireChecks.stringList(denyOut, "network.denyOut");
        egressProxy = WireChecks.jsonObject(egressProxy);
        rules = WireChecks.jsonObject(rules);
        httpsPorts = httpsPorts == null
                ? null
                : java.util.Collections.unmodifiableList(new java.util.ArrayList<>(httpsPorts));
    }

    /** Ingress and egress settings only (what this server reports back). */
    public SandboxNetworkConfig(
            Boolean allowPublicTraffic, List<String> allowOut, List<String> denyOut, String maskRequestHost) {
        this(allowPublicTraffic, allowOut, denyOut, maskRequestHost, null, null, null);
    }

    public boolean allowPublicTrafficOrDefault() {
        return allowPublicTraffic == null || allowPublicTraffic;
    }
}
