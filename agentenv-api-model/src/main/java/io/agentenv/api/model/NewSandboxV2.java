package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import java.util.Map;

/**
 * Body of {@code POST /v2/sandboxes} (SDK 2.51+): the shared {@link SandboxCreateFields}, default timeout 300 s,
 * always secured (no {@code secure} field), and {@code autoPauseMemory}. Fields in no schema are ignored.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record NewSandboxV2(@JsonUnwrapped SandboxCreateFields fields, Boolean autoPauseMemory)
        implements CreateSandboxRequest {

    public static final int DEFAULT_TIMEOUT_SECONDS = 300;

    public NewSandboxV2 {
        requireNonNull(fields, "fields is null");
    }

    /** Every field, in the order of the wire body (for clients such as the {@code aenv} CLI). */
    public NewSandboxV2(
            String templateID,
            Integer timeout,
            Boolean autoPause,
            Boolean autoPauseMemory,
            AutoResume autoResume,
            Boolean allowInternetAccess,
            SandboxNetworkConfig network,
            Map<String, String> metadata,
            Map<String, String> envVars,
            Map<String, Object> customExtensionParams) {
        this(
                new SandboxCreateFields(
                        templateID,
                        timeout,
                        autoPause,
                        autoResume,
                        allowInternetAccess,
                        network,
                        metadata,
                        envVars,
                        customExtensionParams),
                autoPauseMemory);
    }

    @Override
    public int defaultTimeoutSeconds() {
        return DEFAULT_TIMEOUT_SECONDS;
    }

    @Override
    public boolean secureOrDefault() {
        return true;
    }
}
