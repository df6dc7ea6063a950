package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.SandboxId;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The orchestrator's side of the custom extension: when a failure of each hook fails the operation, and how.
 * <ul>
 *   <li>A start hook failure fails the launch. The extension refusing (4xx) becomes the kind the endpoint chose for
 *       that (INVALID_ARGUMENT, or CONFLICT for the deprecated resume route); a 5xx, timeout, broken connection or
 *       unusable answer becomes UPSTREAM_FAILED. The message names the hook, its status and its response body.</li>
 *   <li>stop is best-effort: failures are logged, never thrown; {@link #stopLater} does not even wait.</li>
 * </ul>
 * Never called with a lock held.
 */
final class HookCalls {
    private static final Logger log = LoggerFactory.getLogger(HookCalls.class);

    private final LifecycleHooks hooks;

    HookCalls(LifecycleHooks hooks) {
        this.hooks = requireNonNull(hooks, "hooks is null");
    }

    boolean enabled() {
        return hooks.enabled();
    }

    /**
     * The start hook of an instance that is prepared, registered and has its instance id recorded: start-fresh for a
     * template launch (its extraBootArgs are handed to the backend before start), start-resume for a snapshot or paused
     * source.
     */
    void beforeStart(
            SandboxRuntime.Handle handle, UUID instanceId, String params, LaunchSource source, ErrorKind onRejected)
            throws BackendException {
        if (!hooks.enabled()) {
            return;
        }
        SandboxId id = handle.id();
        HookStart start = new HookStart(id, instanceId, handle.backend().hostNetwork(), params);
        Optional<String> bootArgs;
        try {
            bootArgs = switch (source) {
                case LaunchSource.Template t -> hooks.startFresh(start);
                case LaunchSource.Snapshot s -> {
                    hooks.startResume(start);
                    yield Optional.empty();
                }
                case LaunchSource.Paused p -> {
                    hooks.startResume(start);
                    yield Optional.empty();
                }
            };
        } catch (HookException e) {
            throw classify(id, e, onRejected);
        }
        if (bootArgs.isPresent() && !bootArgs.get().isBlank()) {
            handle.call(backend -> {
                backend.extraBootArgs(bootArgs.get());
                return null;
            });
        }
    }

    /** PATCH custom-extension-params through the extension; returns the full new params (raw JSON object). */
    String patch(SandboxId id, String patch) {
        try {
            return hooks.patchParams(id, patch);
        } catch (HookException e) {
            throw classify(id, e, ErrorKind.INVALID_ARGUMENT);
        }
    }

    /** Best-effort stop of a started instance, waited for; failures are only logged. */
    void stop(SandboxId id, UUID instanceId) {
        if (!hooks.enabled()) {
            return;
        }
        try {
            hooks.stop(id, instanceId);
            log.atDebug()
                    .addKeyValue("sandbox_id", id.value())
                    .addKeyValue("instance_id", instanceId)
                    .log("stop hook sent");
        } catch (HookException | RuntimeException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", id.value())
                    .addKeyValue("instance_id", instanceId)
                    .addKeyValue("error", e.getMessage())
                    .log("custom extension stop hook failed (ignored)");
        }
    }

    /** Fire-and-forget stop for an instance that was abandoned (lost, not preserved at shutdown, found dead). */
    void stopLater(SandboxId id, Optional<UUID> instanceId) {
        if (!hooks.enabled() || instanceId.isEmpty()) {
            return;
        }
        Thread.ofVirtual().name("aenv-stop-hook-" + id.value()).start(() -> stop(id, instanceId.get()));
    }

    static AgentEnvException classify(SandboxId id, HookException e, ErrorKind onRejected) {
        ErrorKind kind = e.rejected() ? onRejected : ErrorKind.UPSTREAM_FAILED;
        log.atWarn()
                .addKeyValue("sandbox_id", id.value())
                .addKeyValue("hook", e.hook().wireName())
                .addKeyValue("failure", e.failure())
                .addKeyValue("status", e.status().isPresent() ? e.status().getAsInt() : -1)
                .addKeyValue("kind", kind)
                .log("custom extension hook failed");
        return new AgentEnvException(kind, "sandbox " + id.value() + ": " + e.getMessage(), e);
    }
}
