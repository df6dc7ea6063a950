package io.agentenv.api.model;

import java.util.Map;

/** What both create bodies ({@link NewSandbox}, v1, and {@link NewSandboxV2}) have in common. */
public sealed interface CreateSandboxRequest permits NewSandbox, NewSandboxV2 {
    String templateID();

    /** Seconds; null means the version's default ({@link #defaultTimeoutSeconds()}). */
    Integer timeout();

    int defaultTimeoutSeconds();

    /** True: pause on timeout; false: kill. Null means E2B's default, kill. */
    Boolean autoPause();

    AutoResume autoResume();

    Boolean allowInternetAccess();

    SandboxNetworkConfig network();

    Map<String, String> metadata();

    Map<String, String> envVars();

    Map<String, Object> customExtensionParams();

    /** With autoPause: whether the timeout pause keeps memory (E2B autoPauseMemory, v2 only; default true). */
    default boolean autoPauseMemoryOrDefault() {
        return true;
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
