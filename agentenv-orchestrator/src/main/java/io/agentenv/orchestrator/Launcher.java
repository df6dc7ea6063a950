package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SandboxId;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a new sandbox (create or fork child) from nothing to RUNNING, one stage at a time, each stage registering its
 * undo: prepare the instance (its network is reserved, nothing runs), register it in the runtime, persist the record as
 * CREATING with a fresh instance id, call the custom extension's start hook (start-fresh for a template, start-resume
 * for a snapshot), start it, then CAS CREATING to RUNNING with the TTL set. A failure at any stage undoes the earlier
 * ones newest first (study §3.3); once the start hook was sent, the undo ends with a best-effort stop hook for the
 * same instance id, after the instance was closed. The hooks run here, between backend stages, so every backend gets
 * the same behaviour.
 */
final class Launcher {
    private static final Logger log = LoggerFactory.getLogger(Launcher.class);

    private final Records records;
    private final SandboxRuntime runtime;
    private final SandboxBackendFactory backends;
    private final LaunchSpecs specs;
    private final Ids ids;
    private final HookCalls hooks;
    private final Clock clock;
    private final Duration readyTimeout;

    Launcher(
            Records records,
            SandboxRuntime runtime,
            SandboxBackendFactory backends,
            LaunchSpecs specs,
            Ids ids,
            HookCalls hooks,
            Clock clock,
            Duration readyTimeout) {
        this.records = requireNonNull(records, "records is null");
        this.runtime = requireNonNull(runtime, "runtime is null");
        this.backends = requireNonNull(backends, "backends is null");
        this.specs = requireNonNull(specs, "specs is null");
        this.ids = requireNonNull(ids, "ids is null");
        this.hooks = requireNonNull(hooks, "hooks is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.readyTimeout = requireNonNull(readyTimeout, "readyTimeout is null");
    }

    /**
     * {@code creating} is the record to persist (state CREATING); returns the RUNNING view. A start hook the extension
     * refuses (4xx) is INVALID_ARGUMENT, any other hook failure UPSTREAM_FAILED; a backend at capacity
     * ({@link BackendException.Exhausted}) is RESOURCE_EXHAUSTED; a backend failure caused by the guest agent (an
     * {@link EnvdException} in its causes: envd never became healthy, or refused its init) is UPSTREAM_FAILED (502, as
     * for every other guest agent failure; E2B's SDK treats 502 and 504 alike, while 503 would read as "service busy");
     * any other backend failure INTERNAL. Every stage done is rolled back first.
     */
    SandboxView launch(SandboxRecord creating, LaunchSource source) {
        SandboxId id = creating.id();
        if (creating.state() != SandboxState.CREATING) {
            throw new IllegalArgumentException("a launch starts from CREATING, not " + creating.state());
        }
        long started = System.nanoTime();
        UUID instance = ids.newInstanceId();
        AtomicBoolean hookSent = new AtomicBoolean();
        try (Rollback rollback = new Rollback(id)) {
            rollback.onFailure("stop hook", () -> {
                if (hookSent.get()) {
                    hooks.stop(id, instance);
                }
            });
            SandboxBackend backend = backends.prepare(specs.of(creating), source);
            rollback.onFailure("close instance", backend::close);

            SandboxRuntime.Handle handle = runtime.register(id, backend);
            rollback.onFailure("detach instance", () -> runtime.detach(handle));

            SandboxRecord inserted = creating.withResources(backend.resources()).withInstanceId(instance);
            long storing = System.nanoTime();
            // on disk before a start hook is sent (recovery sends its stop hook); without hooks it becomes durable
            // with the RUNNING write below, before the answer: a crash before that loses it, and the backend reaps the
            // unclaimed instance at the next start as it would have closed the instance of a CREATING record
            records.insert(
                    inserted, hooks.enabled() ? SandboxStore.Durability.NOW : SandboxStore.Durability.WITH_NEXT_WRITE);
            long storeNanos = System.nanoTime() - storing;
            rollback.onFailure("delete record", () -> records.delete(id, EnumSet.of(SandboxState.CREATING)));

            hookSent.set(true); // before the call: a start whose answer is lost still gets its stop
            hooks.beforeStart(handle, instance, creating.customExtensionParams(), source, ErrorKind.INVALID_ARGUMENT);

            long starting = System.nanoTime();
            handle.call(b -> {
                b.start(readyTimeout);
                return null;
            });

            long replacing = System.nanoTime();
            long startNanos = replacing - starting;
            Instant now = clock.instant();
            SandboxRecord running = inserted.withState(SandboxState.RUNNING)
                    .withResources(backend.resources())
                    .withTtl(creating.timeout(), Optional.of(now.plus(creating.timeout())));
            if (!records.replace(running, SandboxState.CREATING)) {
                throw new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " changed state while starting");
            }
            storeNanos += System.nanoTime() - replacing;
            rollback.commit();
            log.atInfo()
                    .addKeyValue("sandbox_id", id.value())
                    .addKeyValue("template", creating.template().value())
                    .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                    .addKeyValue("start_ms", startNanos / 1_000_000)
                    .addKeyValue("store_ms", storeNanos / 1_000_000)
                    .log("sandbox started");
            return SandboxView.of(running);
        } catch (BackendException.Exhausted e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", id.value())
                    .addKeyValue("limit", e.limit())
                    .log("sandbox launch refused: the backend is at capacity; rolled back");
            throw AgentEnvException.exhausted(e);
        } catch (BackendException e) {
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e).log("sandbox launch failed; rolled back");
            throw guestFailure(e)
                    .map(envd -> new AgentEnvException(
                            ErrorKind.UPSTREAM_FAILED,
                            "sandbox " + id + " could not be started: " + describe(envd, readyTimeout),
                            e))
                    .orElseGet(() ->
                            new AgentEnvException(ErrorKind.INTERNAL, "sandbox " + id + " could not be started", e));
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e).log("sandbox launch failed; rolled back");
            throw e;
        }
    }

    /** What went wrong with the guest agent, in words for the API caller (no probe counts or addresses). */
    static String describe(EnvdException envd, Duration readyTimeout) {
        return switch (envd) {
            case EnvdException.Unreachable u ->
                "its guest agent (envd) did not become ready within " + readyTimeout.toSeconds() + " s";
            case EnvdException.Rejected r -> "its guest agent (envd) refused to initialise";
        };
    }

    /** The guest agent's failure among the causes of {@code e}, if any (the backends wrap it in their own). */
    static Optional<EnvdException> guestFailure(BackendException e) {
        int depth = 0;
        for (Throwable t = e.getCause(); t != null && depth < 16; t = t.getCause(), depth++) {
            if (t instanceof EnvdException envd) {
                return Optional.of(envd);
            }
        }
        return Optional.empty();
    }
}
