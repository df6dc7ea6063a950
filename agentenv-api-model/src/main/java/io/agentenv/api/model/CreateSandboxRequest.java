package io.agentenv.api.model;

import java.util.Map;

/** What both create bodies ({@link NewSandbox}, v1, and {@link NewSandboxV2}) have in common. */
public sealed interface CreateSandboxRequest permits NewSandbox, NewSandboxV2 {
    /** The fields both versions share (unwrapped into the body on the wire). */
    SandboxCreateFields fields();

    default String templateID() {
        return fields().templateID();
    }

    /** Seconds; null means the version's default ({@link #defaultTimeoutSeconds()}). */
    default Integer timeout() {
        return fields().timeout();
    }

    int defaultTimeoutSeconds();

    /** True: pause on timeout; false: kill. Null means E2B's default, kill. */
    default Boolean autoPause() {
        return fields().autoPause();
    }

    default AutoResume autoResume() {
        return fields().autoResume();
    }

    default Boolean allowInternetAccess() {
        return fields().allowInternetAccess();
    }

    default SandboxNetworkConfig network() {
        return fields().network();
    }

    default Map<String, String> metadata() {
        return fields().metadata();
    }

    default Map<String, String> envVars() {
        return fields().envVars();
    }

    default Map<String, Object> customExtensionParams() {
        return fields().customExtensionParams();
    }

    /** With autoPause: whether the timeout pause keeps memory (E2B autoPauseMemory, both versions); null: default. */
    Boolean autoPauseMemory();

    /** With autoPause: whether the timeout pause keeps memory (default true). */
    default boolean autoPauseMemoryOrDefault() {
        return autoPauseMemory() == null || autoPauseMemory();
    }

    default Map<String, Object> mcp() {
        return fields().mcp();
    }

    default Map<String, Object> iam() {
        return fields().iam();
    }

    /** The volumes to mount; null or empty for none. */
    default java.util.List<SandboxVolumeMount> volumeMounts() {
        return fields().volumeMounts();
    }

    /** Whether the envd port requires the access token. */
    boolean secureOrDefault();

    default int timeoutOrDefault() {
        return timeout() == null ? defaultTimeoutSeconds() : timeout();
    }

    default boolean autoPauseOrDefault() {
        return autoPause() != null && autoPause();
    }
}
