package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.SandboxId;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * POST /sandboxes/{id}/pause: CAS RUNNING to PAUSING, pause to a fresh artifact directory, persist PAUSED with the
 * paused state, release the instance. A concurrent pause is joined; recoverable failures go back to RUNNING, terminal
 * ones remove the sandbox.
 */
final class PauseOperation {
    private static final Logger log = LoggerFactory.getLogger(PauseOperation.class);

    private final Records records;
    private final SandboxRuntime runtime;
    private final Artifacts artifacts;
    private final HookCalls hooks;
    private final Disposal disposal;
    private final EventBus events;
    private final Clock clock;
    private final Duration transitionWait;

    PauseOperation(
            Records records,
            SandboxRuntime runtime,
            Artifacts artifacts,
            HookCalls hooks,
            Disposal disposal,
            EventBus events,
            Clock clock,
            Duration transitionWait) {
        this.records = requireNonNull(records, "records is null");
        this.runtime = requireNonNull(runtime, "runtime is null");
        this.artifacts = requireNonNull(artifacts, "artifacts is null");
        this.hooks = requireNonNull(hooks, "hooks is null");
        this.disposal = requireNonNull(disposal, "disposal is null");
        this.events = requireNonNull(events, "events is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.transitionWait = requireNonNull(transitionWait, "transitionWait is null");
    }

    PauseOutcome pause(SandboxId id, PauseMode mode) {
        return run(id, mode, Optional.empty()).orElseThrow();
    }

    /** For TTL eviction: pauses only if it is RUNNING and still expired at {@code now}; empty when skipped. */
    Optional<PauseOutcome> pauseIfExpired(SandboxId id, PauseMode mode, Instant now) {
        return run(id, mode, Optional.of(now));
    }

    private Optional<PauseOutcome> run(SandboxId id, PauseMode mode, Optional<Instant> expiredAt) {
        long deadline = StateSignals.deadline(transitionWait);
        boolean joined = false;
        while (true) {
            if (records.cas(id, SandboxState.RUNNING, SandboxState.PAUSING)) {
                SandboxRecord record = records.get(id).orElseThrow(() -> AgentEnvException.notFound(id));
                if (expiredAt.isPresent()
                        && !record.expiresAt()
                                .map(at -> !at.isAfter(expiredAt.get()))
                                .orElse(false)) {
                    records.cas(id, SandboxState.PAUSING, SandboxState.RUNNING);
                    return Optional.empty();
                }
                pauseOwned(record, mode);
                return Optional.of(joined ? PauseOutcome.JOINED : PauseOutcome.PAUSED);
            }
            SandboxRecord record = records.visible(id);
            switch (record.state()) {
                case PAUSED -> {
                    return expiredAt.isPresent()
                            ? Optional.empty()
                            : Optional.of(joined ? PauseOutcome.JOINED : PauseOutcome.ALREADY_PAUSED);
                }
                case PAUSING -> {
                    if (expiredAt.isPresent()) {
                        return Optional.empty();
                    }
                    joined = true;
                    records.awaitLeaving(id, SandboxState.PAUSING, deadline);
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
        Optional<SandboxRuntime.Handle> handle = runtime.get(id);
        if (handle.isEmpty()) {
            records.cas(id, SandboxState.PAUSING, SandboxState.RUNNING);
            throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " has no live instance to pause");
        }
        Path dir;
        try {
            dir = artifacts.newPausedDir(id);
        } catch (AgentEnvException e) {
            records.cas(id, SandboxState.PAUSING, SandboxState.RUNNING);
            throw e;
        }
        PausedState paused;
        try {
            paused = handle.get().call(backend -> backend.pause(mode, dir));
        } catch (BackendException.Recoverable e) {
            artifacts.delete(dir);
            records.cas(id, SandboxState.PAUSING, SandboxState.RUNNING);
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e).log("pause failed; sandbox still running");
            throw new AgentEnvException(ErrorKind.INTERNAL, "pausing sandbox " + id + " failed", e);
        } catch (BackendException | RuntimeException e) {
            disposal.discard(id, handle, "pause failed terminally", e);
            throw new AgentEnvException(
                    ErrorKind.INTERNAL, "pausing sandbox " + id + " failed and the sandbox was lost", e);
        }
        // the paused instance leaves the runtime before PAUSED is written: a connect woken by that write registers
        // the resumed instance at once
        runtime.detach(handle.get());
        long shareStarted = System.nanoTime();
        try {
            artifacts.share(dir); // before PAUSED is visible: any node may then resume it
        } catch (IOException | RuntimeException e) {
            log.atError()
                    .addKeyValue("sandbox_id", id.value())
                    .setCause(e)
                    .log("the paused state could not be stored in shared storage; it resumes on this node only");
        }
        long shareMs = (System.nanoTime() - shareStarted) / 1_000_000;
        try {
            SandboxRecord current = records.get(id).orElseThrow(); // picks up a network change made meanwhile
            SandboxRecord done = current.withState(SandboxState.PAUSED)
                    .withPaused(Optional.of(new StoredState(paused.encode(), dir)))
                    .withTtl(current.timeout(), Optional.empty())
                    .withResources(paused.resources());
            if (!records.replace(done, SandboxState.PAUSING)) {
                throw new IllegalStateException("record left PAUSING while its pause was in flight");
            }
        } catch (RuntimeException e) {
            disposal.discard(id, handle, "the paused state could not be persisted", e);
            throw new AgentEnvException(
                    ErrorKind.INTERNAL, "pausing sandbox " + id + " failed and the sandbox was lost", e);
        }
        disposal.closeQuietly(handle.get());
        record.instanceId().ifPresent(instance -> hooks.stop(id, instance));
        log.atInfo()
                .addKeyValue("sandbox_id", id.value())
                .addKeyValue("from", SandboxState.RUNNING)
                .addKeyValue("to", SandboxState.PAUSED)
                .addKeyValue("mode", mode)
                .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                .addKeyValue("share_ms", shareMs)
                .log("sandbox paused");
        events.publish(new LifecycleEvent.Paused(id, clock.instant()));
    }
}
