package io.agentenv.orchestrator;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.SandboxId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * POST /sandboxes/{id}/pause: CAS RUNNING to PAUSING, pause to a fresh artifact directory, persist PAUSED with the
 * paused state, release the instance. A concurrent pause is joined; recoverable failures go back to RUNNING, terminal
 * ones remove the sandbox.
 */
final class PauseOperation {
    private static final Logger log = LoggerFactory.getLogger(PauseOperation.class);

    private final OperationContext ctx;

    PauseOperation(OperationContext ctx) {
        this.ctx = requireNonNull(ctx, "ctx is null");
    }

    PauseOutcome pause(SandboxId id, PauseMode mode) {
        return run(id, mode, Optional.empty()).orElseThrow();
    }

    /** For TTL eviction: pauses only if it is RUNNING and still expired at {@code now}; empty when skipped. */
    Optional<PauseOutcome> pauseIfExpired(SandboxId id, PauseMode mode, Instant now) {
        return run(id, mode, Optional.of(now));
    }

    private Optional<PauseOutcome> run(SandboxId id, PauseMode mode, Optional<Instant> expiredAt) {
        long deadline = ctx.transitionDeadline();
        boolean joined = false;
        while (true) {
            if (ctx.records.cas(id, SandboxState.RUNNING, SandboxState.PAUSING)) {
                SandboxRecord record = ctx.records.get(id).orElseThrow(() -> AgentEnvException.notFound(id));
                if (expiredAt.isPresent() && !record.expiresAt().map(at -> !at.isAfter(expiredAt.get())).orElse(false)) {
                    ctx.records.cas(id, SandboxState.PAUSING, SandboxState.RUNNING);
                    return Optional.empty();
                }
                pauseOwned(record, mode);
                return Optional.of(joined ? PauseOutcome.JOINED : PauseOutcome.PAUSED);
            }
            SandboxRecord record = ctx.records.visible(id);
            switch (record.state()) {
                case PAUSED -> {
                    return expiredAt.isPresent() ? Optional.empty()
                            : Optional.of(joined ? PauseOutcome.JOINED : PauseOutcome.ALREADY_PAUSED);
                }
                case PAUSING -> {
                    if (expiredAt.isPresent()) {
                        return Optional.empty();
                    }
                    joined = true;
                    ctx.records.awaitLeaving(id, SandboxState.PAUSING, deadline);
                }
                case RUNNING -> {
                    // lost a race with an operation that has already finished; try again
                }
                case CREATING, RESUMING, SNAPSHOTTING, FORKING, KILLING -> {
                    if (expiredAt.isPresent()) {
                        return Optional.empty();
                    }
                    throw AgentEnvException.invalidState(id, record.state(), "be paused");
                }
            }
        }
    }

    /** Owns PAUSING. */
    private void pauseOwned(SandboxRecord record, PauseMode mode) {
        SandboxId id = record.id();
        long started = System.nanoTime();
        Optional<SandboxRuntime.Handle> handle = ctx.runtime.get(id);
        if (handle.isEmpty()) {
            ctx.records.cas(id, SandboxState.PAUSING, SandboxState.RUNNING);
            throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " has no live instance to pause");
        }
        Path dir;
        try {
            dir = ctx.artifacts.newPausedDir(id);
        } catch (AgentEnvException e) {
            ctx.records.cas(id, SandboxState.PAUSING, SandboxState.RUNNING);
            throw e;
        }
        PausedState paused;
        try {
            paused = handle.get().call(backend -> backend.pause(mode, dir));
        } catch (BackendException.Recoverable e) {
            ctx.artifacts.delete(dir);
            ctx.records.cas(id, SandboxState.PAUSING, SandboxState.RUNNING);
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e).log("pause failed; sandbox still running");
            throw new AgentEnvException(ErrorKind.INTERNAL, "pausing sandbox " + id + " failed", e);
        } catch (BackendException | RuntimeException e) {
            ctx.discard(id, handle, "pause failed terminally", e);
            throw new AgentEnvException(ErrorKind.INTERNAL, "pausing sandbox " + id + " failed and the sandbox was lost", e);
        }
        // the paused instance leaves the runtime before PAUSED is written: a connect woken by that write registers
        // the resumed instance at once
        ctx.runtime.detach(handle.get());
        try {
            SandboxRecord current = ctx.records.get(id).orElseThrow(); // picks up a network change made meanwhile
            SandboxRecord done = current.withState(SandboxState.PAUSED)
                    .withPaused(Optional.of(new StoredState(paused.encode(), dir)))
                    .withTtl(current.timeout(), Optional.empty())
                    .withResources(paused.resources());
            if (!ctx.records.replace(done, SandboxState.PAUSING)) {
                throw new IllegalStateException("record left PAUSING while its pause was in flight");
            }
        } catch (RuntimeException e) {
            ctx.discard(id, handle, "the paused state could not be persisted", e);
            throw new AgentEnvException(ErrorKind.INTERNAL, "pausing sandbox " + id + " failed and the sandbox was lost", e);
        }
        ctx.closeQuietly(handle.get());
        record.instanceId().ifPresent(instance -> ctx.hooks.stop(id, instance));
        log.atInfo().addKeyValue("sandbox_id", id.value()).addKeyValue("from", SandboxState.RUNNING)
                .addKeyValue("to", SandboxState.PAUSED).addKeyValue("mode", mode)
                .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000).log("sandbox paused");
        ctx.events.publish(new LifecycleEvent.Paused(id, ctx.now()));
    }
}
