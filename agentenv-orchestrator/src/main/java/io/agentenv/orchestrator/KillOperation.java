package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SandboxId;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DELETE /sandboxes/{id}: CAS {RUNNING, PAUSED} to KILLING, stop the instance, delete artifacts and record. A
 * transition in progress is waited out (bounded) and the CAS retried.
 */
final class KillOperation {
    private static final Logger log = LoggerFactory.getLogger(KillOperation.class);

    private final Records records;
    private final SandboxRuntime runtime;
    private final SandboxBackendFactory backends;
    private final Artifacts artifacts;
    private final HookCalls hooks;
    private final EventBus events;
    private final Clock clock;
    private final Duration transitionWait;

    KillOperation(
            Records records,
            SandboxRuntime runtime,
            SandboxBackendFactory backends,
            Artifacts artifacts,
            HookCalls hooks,
            EventBus events,
            Clock clock,
            Duration transitionWait) {
        this.records = requireNonNull(records, "records is null");
        this.runtime = requireNonNull(runtime, "runtime is null");
        this.backends = requireNonNull(backends, "backends is null");
        this.artifacts = requireNonNull(artifacts, "artifacts is null");
        this.hooks = requireNonNull(hooks, "hooks is null");
        this.events = requireNonNull(events, "events is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.transitionWait = requireNonNull(transitionWait, "transitionWait is null");
    }

    void kill(SandboxId id) {
        run(id, Optional.empty());
    }

    /** For TTL eviction: kills only if it is RUNNING and still expired at {@code now}; false when skipped. */
    boolean killIfExpired(SandboxId id, Instant now) {
        return run(id, Optional.of(now));
    }

    private boolean run(SandboxId id, Optional<Instant> expiredAt) {
        long deadline = StateSignals.deadline(transitionWait);
        while (true) {
            SandboxRecord record = records.visible(id);
            SandboxState state = record.state();
            if (expiredAt.isPresent() && state != SandboxState.RUNNING) {
                return false;
            }
            if (state.isStable()) {
                if (!records.cas(id, state, SandboxState.KILLING)) {
                    continue; // another operation won the race; look again
                }
                if (expiredAt.isPresent() && !stillExpired(id, expiredAt.get())) {
                    records.cas(id, SandboxState.KILLING, state);
                    return false;
                }
                finish(id, state);
                return true;
            }
            records.awaitLeaving(id, state, deadline);
        }
    }

    /**
     * For the liveness check: removes a RUNNING sandbox whose instance {@code gone} died on its own, like a kill (the
     * instance is closed to release what is left, record and artifacts deleted, Killed published). False when the
     * sandbox is no longer RUNNING (another operation owns it and meets the death itself) or has another instance by
     * now.
     */
    boolean removeGone(SandboxRuntime.Handle gone, String reason) {
        SandboxId id = gone.id();
        if (!records.cas(id, SandboxState.RUNNING, SandboxState.KILLING)) {
            return false;
        }
        if (runtime.get(id).filter(current -> current == gone).isEmpty()) {
            records.cas(id, SandboxState.KILLING, SandboxState.RUNNING);
            return false;
        }
        log.atWarn()
                .addKeyValue("sandbox_id", id.value())
                .addKeyValue("reason", reason)
                .log("sandbox instance is gone on its own; removing the sandbox");
        finish(id, SandboxState.RUNNING);
        return true;
    }

    /**
     * For the liveness check: removes a RUNNING record that has no instance on this node (see {@link LivenessCheck}),
     * like a kill (artifacts and record deleted, Killed published; no stop hook: the operation that failed sent it when
     * it rolled back). False when it has an instance by now or is no longer RUNNING.
     */
    boolean removeWithoutInstance(SandboxId id) {
        if (runtime.get(id).isPresent() || !records.cas(id, SandboxState.RUNNING, SandboxState.KILLING)) {
            return false;
        }
        if (runtime.get(id).isPresent()) {
            records.cas(id, SandboxState.KILLING, SandboxState.RUNNING);
            return false;
        }
        log.atWarn()
                .addKeyValue("sandbox_id", id.value())
                .log("a running sandbox has no instance on this node; removing its record");
        finish(id, SandboxState.RUNNING);
        return true;
    }

    private boolean stillExpired(SandboxId id, Instant now) {
        return records.get(id)
                .flatMap(SandboxRecord::expiresAt)
                .map(at -> !at.isAfter(now))
                .orElse(false);
    }

    /** Owns KILLING. */
    private void finish(SandboxId id, SandboxState previous) {
        long started = System.nanoTime();
        Optional<UUID> instance = records.get(id).flatMap(SandboxRecord::instanceId);
        Optional<SandboxRuntime.Handle> handle = runtime.get(id);
        if (handle.isPresent()) {
            try {
                handle.get().call(backend -> {
                    backend.kill(); // returns once nothing of it runs; the backend may release the rest after
                    return null;
                });
            } catch (BackendException | RuntimeException e) {
                records.cas(id, SandboxState.KILLING, previous);
                log.atError().addKeyValue("sandbox_id", id.value()).setCause(e).log("stopping the sandbox failed");
                throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " could not be stopped", e);
            }
            runtime.detach(handle.get());
        } else if (previous == SandboxState.PAUSED) {
            try {
                backends.discardPaused(id);
            } catch (BackendException | RuntimeException e) {
                records.cas(id, SandboxState.KILLING, previous);
                log.atError()
                        .addKeyValue("sandbox_id", id.value())
                        .setCause(e)
                        .log("releasing what the paused sandbox still held failed");
                throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " could not be released", e);
            }
        }
        long stopped = System.nanoTime();
        artifacts.deleteSandbox(id);
        if (previous == SandboxState.PAUSED) {
            artifacts.unshareSandbox(id); // a running sandbox's shared state was deleted when it resumed
        }
        long deleted = System.nanoTime();
        records.delete(id, EnumSet.of(SandboxState.KILLING));
        long recorded = System.nanoTime();
        if (handle.isPresent()) { // a paused sandbox had its stop hook when it was paused
            instance.ifPresent(instanceId -> hooks.stop(id, instanceId));
        }
        log.atInfo()
                .addKeyValue("sandbox_id", id.value())
                .addKeyValue("from", previous)
                .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                .addKeyValue("backend_ms", (stopped - started) / 1_000_000)
                .addKeyValue("artifacts_ms", (deleted - stopped) / 1_000_000)
                .addKeyValue("store_ms", (recorded - deleted) / 1_000_000)
                .log("sandbox killed");
        events.publish(new LifecycleEvent.Killed(id, clock.instant()));
    }
}
