package io.agentenv.orchestrator;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

import static java.util.Objects.requireNonNull;

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

    private final OperationContext ctx;

    ResumeOperation(OperationContext ctx) {
        this.ctx = requireNonNull(ctx, "ctx is null");
    }

    ConnectResult run(SandboxId id, Duration timeout, Mode mode) {
        long deadline = ctx.transitionDeadline();
        boolean joinedResume = false;
        while (true) {
            SandboxRecord record = ctx.records.visible(id);
            switch (record.state()) {
                case RUNNING -> {
                    Instant wanted = ctx.now().plus(timeout);
                    boolean extendOnly = mode == Mode.CONNECT || joinedResume;
                    Instant expiresAt = extendOnly
                            ? record.expiresAt().filter(current -> current.isAfter(wanted)).orElse(wanted) : wanted;
                    Duration newTimeout = extendOnly ? record.timeout() : timeout;
                    if (ctx.records.updateTtl(id, SandboxState.RUNNING, newTimeout, Optional.of(expiresAt))) {
                        SandboxView view = OperationContext.view(ctx.records.visible(id));
                        return new ConnectResult(view,
                                joinedResume ? ConnectResult.Outcome.RESUMED : ConnectResult.Outcome.ALREADY_RUNNING);
                    }
                }
                case PAUSED -> {
                    if (ctx.records.cas(id, SandboxState.PAUSED, SandboxState.RESUMING)) {
                        return new ConnectResult(resumeOwned(id, timeout, mode), ConnectResult.Outcome.RESUMED);
                    }
                }
                case RESUMING -> {
                    joinedResume = true;
                    ctx.records.awaitLeaving(id, SandboxState.RESUMING, deadline);
                }
                case PAUSING -> ctx.records.awaitLeaving(id, SandboxState.PAUSING, deadline);
                case CREATING, SNAPSHOTTING, FORKING -> {
                    if (mode == Mode.RESUME) {
                        throw AgentEnvException.invalidState(id, record.state(), "be resumed");
                    }
                    ctx.records.awaitLeaving(id, record.state(), deadline);
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
        SandboxRecord record = ctx.records.get(id).orElseThrow(() -> AgentEnvException.notFound(id));
        if (record.paused().isEmpty()) {
            ctx.records.cas(id, SandboxState.RESUMING, SandboxState.PAUSED);
            throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " has no resumable state");
        }
        StoredState stored = record.paused().get();
        SandboxRecord running;
        try (Rollback rollback = new Rollback(id)) {
            rollback.onFailure("back to paused", () -> ctx.records.cas(id, SandboxState.RESUMING, SandboxState.PAUSED));
            UUID instance = ctx.ids.newInstanceId();
            AtomicBoolean hookSent = new AtomicBoolean();
            rollback.onFailure("stop hook", () -> {
                if (hookSent.get()) {
                    ctx.hooks.stop(id, instance);
                }
            });
            PausedState state = ctx.backends.decodePausedState(stored.encoded(), stored.artifactDir());
            LaunchSource source = new LaunchSource.Paused(state);
            SandboxBackend backend = ctx.backends.prepare(ctx.specFor(record), source);
            rollback.onFailure("close instance", backend::close);
            SandboxRuntime.Handle handle = ctx.runtime.register(id, backend);
            rollback.onFailure("detach instance", () -> ctx.runtime.detach(handle));
            SandboxRecord resuming = ctx.records.get(id).orElseThrow().withInstanceId(instance);
            if (!ctx.records.replace(resuming, SandboxState.RESUMING)) {
                throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " changed state while resuming");
            }
            hookSent.set(true); // before the call: a start whose answer is lost still gets its stop
            ctx.hooks.beforeStart(handle, instance, resuming.customExtensionParams(), source,
                    mode == Mode.RESUME ? ErrorKind.CONFLICT : ErrorKind.INVALID_ARGUMENT);
            handle.call(b -> {
                b.start(ctx.settings.readyTimeout());
                return null;
            });
            Instant now = ctx.now();
            running = ctx.records.get(id).orElseThrow().withState(SandboxState.RUNNING).withPaused(Optional.empty())
                    .withTtl(timeout, Optional.of(now.plus(timeout))).withResources(backend.resources());
            if (!ctx.records.replace(running, SandboxState.RESUMING)) {
                throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " changed state while resuming");
            }
            rollback.commit();
        } catch (BackendException.Exhausted e) {
            log.atWarn().addKeyValue("sandbox_id", id.value()).addKeyValue("limit", e.limit())
                    .log("resume refused: the backend is at capacity; sandbox stays paused");
            throw AgentEnvException.exhausted(e);
        } catch (BackendException e) {
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e).log("resume failed; sandbox stays paused");
            throw Launcher.guestFailure(e).map(envd -> new AgentEnvException(ErrorKind.UPSTREAM_FAILED, "resuming sandbox "
                    + id + " failed: " + Launcher.describe(envd, ctx.settings.readyTimeout()) + "; it stays paused", e))
                    .orElseGet(() -> new AgentEnvException(ErrorKind.INTERNAL, "resuming sandbox " + id + " failed", e));
        }
        ctx.artifacts.delete(stored.artifactDir());
        log.atInfo().addKeyValue("sandbox_id", id.value()).addKeyValue("from", SandboxState.PAUSED)
                .addKeyValue("to", SandboxState.RUNNING)
                .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000).log("sandbox resumed");
        ctx.events.publish(new LifecycleEvent.Resumed(id, ctx.now()));
        return OperationContext.view(running);
    }
}
