package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Map;

/**
 * Body of {@code POST /sandboxes} (v1, used by SDKs up to 2.50): default timeout 15 s, {@code secure} flag,
 * snake_case {@code allow_internet_access}. {@code mcp} and any other unknown field are ignored.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record NewSandbox(
        @JsonProperty("templateID") String templateID,
        Integer timeout,
        Boolean autoPause,
        AutoResume autoResume,
        Boolean secure,
        @JsonProperty("allow_internet_access") Boolean allowInternetAccess,
        SandboxNetworkConfig network,
        Map<String, String> metadata,
        Map<String, String> envVars,
        Map<String, Object> customExtensionParams) implements CreateSandboxRequest {

    public static final int DEFAULT_TIMEOUT_SECONDS = 15;

    public NewSandbox {
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
    public boolean secureOrDefault() {
        return secure != null && secure;
    }
}
