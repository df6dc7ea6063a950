package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.SandboxId;
import java.time.Clock;
import java.util.EnumSet;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lets go of a sandbox the orchestrator can no longer keep: a terminal backend failure in pause, capture or a network
 * update ({@link #discard}), or an instance left over at shutdown ({@link #closeQuietly}, {@link #instanceOf}). Never
 * throws; what it cannot release is logged and left to restart recovery.
 */
final class Disposal {
    private static final Logger log = LoggerFactory.getLogger(Disposal.class);

    private final Records records;
    private final SandboxRuntime runtime;
    private final Artifacts artifacts;
    private final HookCalls hooks;
    private final EventBus events;
    private final Clock clock;

    Disposal(
            Records records,
            SandboxRuntime runtime,
            Artifacts artifacts,
            HookCalls hooks,
            EventBus events,
            Clock clock) {
        this.records = requireNonNull(records, "records is null");
        this.runtime = requireNonNull(runtime, "runtime is null");
        this.artifacts = requireNonNull(artifacts, "artifacts is null");
        this.hooks = requireNonNull(hooks, "hooks is null");
        this.events = requireNonNull(events, "events is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    /**
     * A terminal backend failure made the sandbox unusable: releases its instance, artifacts and record, and says so
     * in the log and as a Killed event. Never throws.
     */
    void discard(SandboxId id, Optional<SandboxRuntime.Handle> handle, String reason, Throwable cause) {
        Optional<UUID> instance = instanceOf(id);
        handle.ifPresent(h -> {
            runtime.detach(h);
            closeQuietly(h);
            hooks.stopLater(id, instance);
        });
        artifacts.deleteSandbox(id);
        try {
            records.delete(id, EnumSet.allOf(SandboxState.class));
        } catch (RuntimeException e) {
            log.atError()
                    .addKeyValue("sandbox_id", id.value())
                    .setCause(e)
                    .log("cannot delete the record of a lost sandbox; restart recovery will remove it");
        }
        log.atError()
                .addKeyValue("sandbox_id", id.value())
                .addKeyValue("reason", reason)
                .setCause(cause)
                .log("sandbox lost and removed");
        events.publish(new LifecycleEvent.Killed(id, clock.instant()));
    }

    /** The recorded instance id of the sandbox, empty when unknown or unreadable (for best-effort stop hooks). */
    Optional<UUID> instanceOf(SandboxId id) {
        try {
            return records.get(id).flatMap(SandboxRecord::instanceId);
        } catch (RuntimeException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", id.value())
                    .setCause(e)
                    .log("cannot read the instance id for the stop hook");
            return Optional.empty();
        }
    }

    void closeQuietly(SandboxRuntime.Handle handle) {
        try {
            handle.call(backend -> {
                backend.close();
                return null;
            });
        } catch (BackendException | RuntimeException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", handle.id().value())
                    .setCause(e)
                    .log("closing a backend instance failed");
        }
    }
}
