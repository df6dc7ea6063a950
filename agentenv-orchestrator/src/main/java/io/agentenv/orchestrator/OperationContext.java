package io.agentenv.orchestrator;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdTokens;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SandboxId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Optional;
import java.util.UUID;

import static java.util.Objects.requireNonNull;

/** What every operation shares. Built once by {@link Orchestrator}. */
final class OperationContext {
    private static final Logger log = LoggerFactory.getLogger(OperationContext.class);

    final Records records;
    final SandboxRuntime runtime;
    final SandboxBackendFactory backends;
    final EnvdTokens tokens;
    final Clock clock;
    final OrchestratorSettings settings;
    final EventBus events;
    final Artifacts artifacts;
    final Ids ids;
    final TemplateCatalog templates;
    final HookCalls hooks;
    final PausedLogs pausedLogs;

    OperationContext(Records records, SandboxRuntime runtime, SandboxBackendFactory backends, EnvdTokens tokens,
                     Clock clock, OrchestratorSettings settings, EventBus events, Artifacts artifacts, Ids ids,
                     TemplateCatalog templates, HookCalls hooks, PausedLogs pausedLogs) {
        this.records = requireNonNull(records, "records is null");
        this.runtime = requireNonNull(runtime, "runtime is null");
        this.backends = requireNonNull(backends, "backends is null");
        this.tokens = requireNonNull(tokens, "tokens is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.settings = requireNonNull(settings, "settings is null");
        this.events = requireNonNull(events, "events is null");
        this.artifacts = requireNonNull(artifacts, "artifacts is null");
        this.ids = requireNonNull(ids, "ids is null");
        this.templates = requireNonNull(templates, "templates is null");
        this.hooks = requireNonNull(hooks, "hooks is null");
        this.pausedLogs = requireNonNull(pausedLogs, "pausedLogs is null");
    }

    Instant now() {
        return clock.instant();
    }

    /** A deadline for waiting out another operation's transition. */
    long transitionDeadline() {
        return StateSignals.deadline(settings.transitionWait());
    }

    LaunchSpec specFor(SandboxRecord record) {
        return new LaunchSpec(record.id(), record.template(), record.envVars(), settings.defaultUser(),
                tokens.envdToken(record.id()), record.network());
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
            log.atError().addKeyValue("sandbox_id", id.value()).setCause(e)
                    .log("cannot delete the record of a lost sandbox; restart recovery will remove it");
        }
        log.atError().addKeyValue("sandbox_id", id.value()).addKeyValue("reason", reason).setCause(cause)
                .log("sandbox lost and removed");
        events.publish(new LifecycleEvent.Killed(id, now()));
    }

    /** The recorded instance id of the sandbox, empty when unknown or unreadable (for best-effort stop hooks). */
    Optional<UUID> instanceOf(SandboxId id) {
        try {
            return records.get(id).flatMap(SandboxRecord::instanceId);
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e).log("cannot read the instance id for the stop hook");
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
            log.atWarn().addKeyValue("sandbox_id", handle.id().value()).setCause(e).log("closing a backend instance failed");
        }
    }

    static SandboxView view(SandboxRecord r) {
        Optional<Instant> expiresAt = switch (r.state()) {
            case PAUSING, PAUSED, KILLING -> Optional.empty();
            case CREATING, RESUMING, RUNNING, SNAPSHOTTING, FORKING -> r.expiresAt();
        };
        return new SandboxView(r.id(), r.template(), r.alias(), r.state(), r.startedAt(), expiresAt, r.timeout(),
                r.onTimeout(), r.autoResume(), r.secure(), r.resources(), r.metadata(), r.network(), r.maskRequestHost());
    }
}
