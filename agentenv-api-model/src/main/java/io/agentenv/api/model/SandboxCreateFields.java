package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Map;

/**
 * The fields both create bodies ({@link NewSandbox}, v1, and {@link NewSandboxV2}) carry, checked once. The bodies
 * hold it {@code @JsonUnwrapped}, so on the wire these are top-level fields of the body, as E2B sends them.
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
        Map<String, Object> customExtensionParams) {

    public SandboxCreateFields {
        WireChecks.requireText(templateID, "templateID");
        WireChecks.nonNegative(timeout, "timeout");
        metadata = WireChecks.stringMap(metadata, "metadata");
        envVars = WireChecks.stringMap(envVars, "envVars");
        customExtensionParams = WireChecks.jsonObject(customExtensionParams);
    }
}
