package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/**
 * The fields both create bodies ({@link NewSandbox}, v1, and {@link NewSandboxV2}) carry, checked once. The bodies
 * hold it {@code @JsonUnwrapped}, so on the wire these are top-level fields of the body, as E2B sends them.
 * {@code mcp} and {@code iam} are read so that the server can refuse them by name when they ask for something it does
 * not have (an MCP gateway, workload identity); they and {@code volumeMounts} are written only when present.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record SandboxCreateFields(
        @JsonProperty("templateID") String templateID,
        Integer timeout,
        Boolean autoPause,
        AutoResume autoResume,
        @JsonProperty("allow_internet_access") Boolean allowInternetAccess,
        SandboxNetworkConfig network,
        Map<String, String> metadata,
        Map<String, String> envVars,
        Map<String, Object> customExtensionParams,
        @JsonInclude(JsonInclude.Include.NON_NULL) Map<String, Object> mcp,
        @JsonInclude(JsonInclude.Include.NON_NULL) Map<String, Object> iam,
        @JsonInclude(JsonInclude.Include.NON_NULL) List<SandboxVolumeMount> volumeMounts) {

    public SandboxCreateFields {
        WireChecks.requireText(templateID, "templateID");
        WireChecks.nonNegative(timeout, "timeout");
        metadata = WireChecks.stringMap(metadata, "metadata");
        envVars = WireChecks.stringMap(envVars, "envVars");
        customExtensionParams = WireChecks.jsonObject(customExtensionParams);
        mcp = WireChecks.jsonObject(mcp);
        iam = WireChecks.jsonObject(iam);
        if (volumeMounts != null) {
            if (volumeMounts.contains(null)) {
                throw new IllegalArgumentException("volumeMounts has a null entry");
            }
            volumeMounts = List.copyOf(volumeMounts);
        }
    }

    /** The fields without MCP, workload identity or volumes. */
    public SandboxCreateFields(
            String templateID,
            Integer timeout,
            Boolean autoPause,
            AutoResume autoResume,
            Boolean allowInternetAccess,
            SandboxNetworkConfig network,
            Map<String, String> metadata,
            Map<String, String> envVars,
            Map<String, Object> customExtensionParams) {
        this(
                templateID,
                timeout,
                autoPause,
                autoResume,
                allowInternetAccess,
                network,
                metadata,
                envVars,
                customExtensionParams,
                null,
                null,
                null);
    }
}
