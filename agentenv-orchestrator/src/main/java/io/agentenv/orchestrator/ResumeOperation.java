package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SandboxId;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * POST /sandboxes/{id}/connect and the deprecated /resume: a RUNNING sandbox only gets its TTL adjusted; a PAUSED one
 * is restored (CAS PAUSED to RESUMING, decode, prepare, start, persist RUNNING) and a concurrent resume is joined. A
 * failed resume leaves it PAUSED with its paused state intact.
 */
final class ResumeOperation {
    private static final Logger log = LoggerFactory.getLogger(ResumeOperation.class);

    /** How the TTL of an already running sandbox is treated. */
    enum Mode {
        /** E2B connect: extend only; waits out every transition. */
        CONNECT,
        /** Deprecated resume: set to now + timeout; CONFLICT while creating, snapshotting or forking. */
        RESUME
    }

    private final Records records;
    private final SandboxRuntime runtime;
    private final SandboxBackendFactory backends;
    private final LaunchSpecs specs;
    private final Ids ids;
    private final HookCalls hooks;
    private final Artifacts artifacts;
    private final EventBus events;
    private final Clock clock;
    private final Duration readyTimeout;
    private final Duration transitionWait;

    ResumeOperation(
            Records records,
            SandboxRuntime runtime,
            SandboxBackendFactory backends,
            LaunchSpecs specs,
            Ids ids,
            HookCalls hooks,
            Artifacts artifacts,
            EventBus events,
            Clock clock,
            Duration readyTimeout,
            Duration transitionWait) {
        this.records = requireNonNull(records, "records is null");
        this.runtime = requireNonNull(runtime, "runtime is null");
        this.backends = requireNonNull(backends, "backends is null");
        this.specs = requireNonNull(specs, "specs is null");
        this.ids = requireNonNull(ids, "ids is null");
        this.hooks = requireNonNull(hooks, "hooks is null");
        this.artifacts = requireNonNull(artifacts, "artifacts is null");
        this.events = requireNonNull(events, "events is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.readyTimeout = requireNonNull(readyTimeout, "readyTimeout is null");
        this.transitionWait = requireNonNull(transitionWait, "transitionWait is null");
    }

    ConnectResult run(SandboxId id, Duration timeout, Mode mode) {
        long deadline = StateSignals.deadline(transitionWait);
        boolean joinedResume = false;
        while (true) {
            SandboxRecord record = records.visible(id);
            switch (record.state()) {
                case RUNNING -> {
                    Instant wanted = clock.instant().plus(timeout);
                    boolean extendOnly = mode == Mode.CONNECT || joinedResume;
                    Instant expiresAt = extendOnly
                            ? record.expiresAt()
                                    .filter(current -> current.isAfter(wanted))
                                    .orElse(wanted)
                            : wanted;
                    Duration newTimeout = extendOnly ? record.timeout() : timeout;
                    if (records.updateTtl(id, SandboxState.RUNNING, newTimeout, Optional.of(expiresAt))) {
                        SandboxView view = SandboxView.of(records.visible(id));
                        return new ConnectResult(
                                view,
                                joinedResume ? ConnectResult.Outcome.RESUMED : ConnectResult.Outcome.ALREADY_RUNNING);
                    }
                }
                case PAUSED -> {
                    if (records.cas(id, SandboxState.PAUSED, SandboxState.RESUMING)) {
                        return new ConnectResult(resumeOwned(id, timeout, mode), ConnectResult.Outcome.RESUMED);
                    }
                }
                case RESUMING -> {
                    joinedResume = true;
                    records.awaitLeaving(id, SandboxState.RESUMING, deadline);
                }
                case PAUSING -> records.awaitLeaving(id, SandboxState.PAUSING, deadline);
                case CREATING, SNAPSHOTTING, FORKING -> {
                    if (mode == Mode.RESUME) {
                        throw AgentEnvException.invalidState(id, record.state(), "be resumed");
                    }
                    records.awaitLeaving(id, record.state(), deadline);
                }
                case KILLING -> throw AgentEnvException.notFound(id);
            }
        }
    }

    /**
     * Owns RESUMING. The new instance gets a fresh instance id (recorded before the start-resume hook is sent); a hook
     * the extension refuses is INVALID_ARGUMENT for connect and CONFLICT for the deprecated resume route, any other
     * hook failure UPSTREAM_FAILED. On any failure the instance is closed, a stop hook follows if the start hook was
     * sent, and the sandbox is PAUSED again with its paused state and params.
     */
    private SandboxView resumeOwned(SandboxId id, Duration timeout, Mode mode) {
        long started = System.nanoTime();
        SandboxRecord record = records.get(id).orElseThrow(() -> AgentEnvException.notFound(id));
        if (record.paused().isEmpty()) {
            records.cas(id, SandboxState.RESUMING, SandboxState.PAUSED);
            throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " has no resumable state");
        }
        StoredState stored = record.paused().get();
        SandboxRecord running;
        try (Rollback rollback = new Rollback(id)) {
            rollback.onFailure("back to paused", () -> records.cas(id, SandboxState.RESUMING, SandboxState.PAUSED));
            UUID instance = ids.newInstanceId();
            AtomicBoolean hookSent = new AtomicBoolean();
            rollback.onFailure("stop hook", () -> {
                if (hookSent.get()) {
                    hooks.stop(id, instance);
                }
            });
            // a state paused on another node is fetched from the shared storage first
            PausedState state = backends.decodePausedState(stored.encoded(), artifacts.local(stored.artifactDir()));
            LaunchSource source = new LaunchSource.Paused(state);
            SandboxBackend backend = backends.prepare(specs.of(record), source);
            rollback.onFailure("close instance", backend::close);
            SandboxRuntime.Handle handle = runtime.register(id, backend);
            rollback.onFailure("detach instance", () -> runtime.detach(handle));
            SandboxRecord resuming = records.get(id).orElseThrow().withInstanceId(instance);
            if (!records.replace(resuming, SandboxState.RESUMING)) {
                throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " changed state while resuming");
            }
            hookSent.set(true); // before the call: a start whose answer is lost still gets its stop
            hooks.beforeStart(
                    handle,
                    instance,
                    resuming.customExtensionParams(),
                    source,
                    mode == Mode.RESUME ? ErrorKind.CONFLICT : ErrorKind.INVALID_ARGUMENT);
            handle.call(b -> {
                b.start(readyTimeout);
                return null;
            });
            Instant now = clock.instant();
            running = records.get(id)
                    .orElseThrow()
                    .withState(SandboxState.RUNNING)
                    .withPaused(Optional.empty())
                    .withTtl(timeout, Optional.of(now.plus(timeout)))
                    .withResources(backend.resources());
            if (!records.replace(running, SandboxState.RESUMING)) {
                throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " changed state while resuming");
            }
            rollback.commit();
        } catch (BackendException.Exhausted e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", id.value())
                    .addKeyValue("limit", e.limit())
                    .log("resume refused: the backend is at capacity; sandbox stays paused");
            throw AgentEnvException.exhausted(e);
        } catch (BackendException e) {
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e).log("resume failed; sandbox stays paused");
            throw Launcher.guestFailure(e)
                    .map(envd -> new AgentEnvException(
                            ErrorKind.UPSTREAM_FAILED,
                            "resuming sandbox " + id + " failed: " + Launcher.describe(envd, readyTimeout)
                                    + "; it stays paused",
                            e))
                    .orElseGet(
                            () -> new AgentEnvException(ErrorKind.INTERNAL, "resuming sandbox " + id + " failed", e));
        }
        artifacts.deleteState(stored.artifactDir());
        log.atInfo()
                .addKeyValue("sandbox_id", id.value())
                .addKeyValue("from", SandboxState.PAUSED)
                .addKeyValue("to", SandboxState.RUNNING)
                .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                .log("sandbox resumed");
        events.publish(new LifecycleEvent.Resumed(id, clock.instant()));
        return SandboxView.of(running);
    }
}
