package io.agentenv.server.orchestrator;

import io.agentenv.spi.SandboxId;

import static java.util.Objects.requireNonNull;

/**
 * GET/PATCH of custom extension params. No custom extension exists yet (it comes with its own issue), so non-empty
 * params are refused and the stored value is always the empty object.
 */
final class CustomExtensionParams {
    static final String EMPTY = "{}";

    private final OperationContext ctx;

    CustomExtensionParams(OperationContext ctx) {
        this.ctx = requireNonNull(ctx, "ctx is null");
    }

    static void requireEmptyWithoutExtension(String rawJsonObject) {
        requireNonNull(rawJsonObject, "rawJsonObject is null");
        if (!rawJsonObject.strip().equals(EMPTY)) {
            throw AgentEnvException.invalidArgument(
                    "customExtensionParams require a configured custom extension, and none is configured");
        }
    }

    String get(SandboxId id) {
        String stored = ctx.records.visible(id).customExtensionParams();
        return stored.isBlank() ? EMPTY : stored;
    }

    String patch(SandboxId id, String rawJsonObject) {
        SandboxRecord record = ctx.records.visible(id);
        if (record.state() != SandboxState.RUNNING) {
            throw AgentEnvException.invalidState(id, record.state(), "change custom extension params");
        }
        requireEmptyWithoutExtension(rawJsonObject);
        return get(id);
    }
}
