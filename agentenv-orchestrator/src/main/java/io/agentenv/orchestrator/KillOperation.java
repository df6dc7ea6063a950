package io.agentenv.orchestrator;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.SandboxId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.EnumSet;
import java.util.Optional;
import java.util.UUID;

import static java.util.Objects.requireNonNull;

/**
 * DELETE /sandboxes/{id}: CAS {RUNNING, PAUSED} to KILLING, stop the instance, delete artifacts and record. A
 * transition in progress is waited out (bounded) and the CAS retried.
 */
final class KillOperation {
    private static final Logger log = LoggerFactory.getLogger(KillOperation.class);

    private final OperationContext ctx;

    KillOperation(OperationContext ctx) {
        this.ctx = requireNonNull(ctx, "ctx is null");
    }

    void kill(SandboxId id) {
        run(id, Optional.empty());
    }

    /** For TTL eviction: kills only if it is RUNNING and still expired at {@code now}; false when skipped. */
    boolean killIfExpired(SandboxId id, Instant now) {
        return run(id, Optional.of(now));
    }

    private boolean run(SandboxId id, Optional<Instant> expiredAt) {
        long deadline = ctx.transitionDeadline();
        while (true) {
            SandboxRecord record = ctx.records.visible(id);
            SandboxState state = record.state();
            if (expiredAt.isPresent() && state != SandboxState.RUNNING) {
                return false;
            }
            if (state.isStable()) {
                if (!ctx.records.cas(id, state, SandboxState.KILLING)) {
                    continue; // another operation won the race; look again
                }
                if (expiredAt.isPresent() && !stillExpired(id, expiredAt.get())) {
                    ctx.records.cas(id, SandboxState.KILLING, state);
                    return false;
                }
                finish(id, state);
                return true;
            }
            ctx.records.awaitLeaving(id, state, deadline);
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
        if (!ctx.records.cas(id, SandboxState.RUNNING, SandboxState.KILLING)) {
            return false;
        }
        if (ctx.runtime.get(id).filter(current -> current == gone).isEmpty()) {
            ctx.records.cas(id, SandboxState.KILLING, SandboxState.RUNNING);
            return false;
        }
        log.atWarn().addKeyValue("sandbox_id", id.value()).addKeyValue("reason", reason)
                .log("sandbox instance is gone on its own; removing the sandbox");
        finish(id, SandboxState.RUNNING);
        return true;
    }

    private boolean stillExpired(SandboxId id, Instant now) {
        return ctx.records.get(id).flatMap(SandboxRecord::expiresAt).map(at -> !at.isAfter(now)).orElse(false);
    }

    /** Owns KILLING. */
    private void finish(SandboxId id, SandboxState previous) {
        Optional<UUID> instance = ctx.records.get(id).flatMap(SandboxRecord::instanceId);
        Optional<SandboxRuntime.Handle> handle = ctx.runtime.get(id);
        if (handle.isPresent()) {
            try {
                handle.get().call(backend -> {
                    backend.close();
                    return null;
                });
            } catch (BackendException | RuntimeException e) {
                ctx.records.cas(id, SandboxState.KILLING, previous);
                log.atError().addKeyValue("sandbox_id", id.value()).setCause(e).log("stopping the sandbox failed");
                throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " could not be stopped", e);
            }
            ctx.runtime.detach(handle.get());
        } else if (previous == SandboxState.PAUSED) {
            try {
                ctx.backends.discardPaused(id);
            } catch (BackendException | RuntimeException e) {
                ctx.records.cas(id, SandboxState.KILLING, previous);
                log.atError().addKeyValue("sandbox_id", id.value()).setCause(e)
                        .log("releasing what the paused sandbox still held failed");
                throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " could not be released", e);
            }
        }
        ctx.artifacts.deleteSandbox(id);
        ctx.records.delete(id, EnumSet.of(SandboxState.KILLING));
        if (handle.isPresent()) { // a paused sandbox had its stop hook when it was paused
            instance.ifPresent(started -> ctx.hooks.stop(id, started));
        }
        log.atInfo().addKeyValue("sandbox_id", id.value()).addKeyValue("from", previous).log("sandbox killed");
        ctx.events.publish(new LifecycleEvent.Killed(id, ctx.now()));
    }
}
