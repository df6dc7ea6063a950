package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Map;

/**
 * Body of {@code POST /v2/sandboxes} (SDK 2.51+): default timeout 300 s, always secured (no {@code secure} field),
 * snake_case {@code allow_internet_access}, {@code autoPauseMemory}. {@code mcp}, {@code iam}, {@code volumeMounts}
 * and any other unknown field are accepted and ignored.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record NewSandboxV2(
        @JsonProperty("templateID") String templateID,
        Integer timeout,
        Boolean autoPause,
        Boolean autoPauseMemory,
        AutoResume autoResume,
        @JsonProperty("allow_internet_access") Boolean allowInternetAccess,
        SandboxNetworkConfig network,
        Map<String, String> metadata,
        Map<String, String> envVars,
        Map<String, Object> customExtensionParams) implements CreateSandboxRequest {

    public static final int DEFAULT_TIMEOUT_SECONDS = 300;

    public NewSandboxV2 {
        WireChecks.requireText(templateID, "templateID");
        WireChecks.nonNegative(timeout, "timeout");
        metadata = WireChecks.stringMap(metadata, "metadata");
        envVars = WireChecks.stringMap(envVars, "envVars");
        customExtensionParams = WireChecks.jsonObject(customExtensionParams);
    }

    @Override
    public int defaultTimeoutSeconds() {
        return DEFAULT_TIMEOUT_SECONDS;
    }

    @Override
    public boolean autoPauseMemoryOrDefault() {
        return autoPauseMemory == null || autoPauseMemory;
    }

    @Override
    public boolean secureOrDefault() {
        return true;
    }
}
