package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.HostNetwork;
import io.agentenv.spi.SandboxId;
import java.util.Optional;
import java.util.UUID;

/**
 * What the start-fresh and start-resume hooks are told about the instance about to start.
 *
 * @param sandboxId             the sandbox
 * @param instanceId            the new runtime instance (UUIDv7), already recorded in the store
 * @param network               namespace path and host interaction IP, empty when the backend has no per-sandbox network
 * @param customExtensionParams the sandbox's params as raw JSON object text ({@code "{}"} when none)
 */
public record HookStart(
        SandboxId sandboxId, UUID instanceId, Optional<HostNetwork> network, String customExtensionParams) {
    public HookStart {
        requireNonNull(sandboxId, "sandboxId is null");
        requireNonNull(instanceId, "instanceId is null");
        requireNonNull(network, "network is null");
        requireNonNull(customExtensionParams, "customExtensionParams is null");
    }
}
