package io.agentenv.orchestrator;

import io.agentenv.spi.SandboxId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

import static java.util.Objects.requireNonNull;

/**
 * TTLs: set (overwrite, may shorten), refresh (extend only) and eviction of RUNNING sandboxes whose TTL ran out.
 * Transitions in progress are waited out (bounded); paused sandboxes never expire.
 */
final class TimeoutOperations {
    private static final Logger log = LoggerFactory.getLogger(TimeoutOperations.class);

    private final OperationContext ctx;
    private final PauseOperation pause;
    private final KillOperation kill;

    TimeoutOperations(OperationContext ctx, PauseOperation pause, KillOperation kill) {
        this.ctx = requireNonNull(ctx, "ctx is null");
        this.pause = requireNonNull(pause, "pause is null");
        this.kill = requireNonNull(kill, "kill is null");
    }

    void setTimeout(SandboxId id, Duration timeout) {
        long deadline = ctx.transitionDeadline();
        while (true) {
            SandboxRecord record = ctx.records.visible(id);
            switch (record.state()) {
                case RUNNING -> {
                    if (ctx.records.updateTtl(id, SandboxState.RUNNING, timeout, Optional.of(ctx.now().plus(timeout)))) {
                        return;
                    }
                }
                case PAUSED -> {
                    if (ctx.records.updateTtl(id, SandboxState.PAUSED, timeout, Optional.empty())) {
                        return;
                    }
                }
                default -> ctx.records.awaitLeaving(id, record.state(), deadline);
            }
        }
    }

    void refresh(SandboxId id, Duration duration) {
        long deadline = ctx.transitionDeadline();
        while (true) {
            SandboxRecord record = ctx.records.visible(id);
            switch (record.state()) {
                case RUNNING -> {
                    Instant wanted = ctx.now().plus(duration);
                    Instant expiresAt = record.expiresAt().filter(at -> at.isAfter(wanted)).orElse(wanted);
                    if (ctx.records.updateTtl(id, SandboxState.RUNNING, record.timeout(), Optional.of(expiresAt))) {
                        return;
                    }
                }
                case PAUSED -> {
                    return; // paused sandboxes have no running TTL to extend
                }
                default -> ctx.records.awaitLeaving(id, record.state(), deadline);
            }
        }
    }

    /**
     * Applies the timeout action to every RUNNING sandbox expired at {@code now}, concurrently on {@code executor},
     * and returns when all are done. Failures are logged and retried on the next call; a TTL extended meanwhile wins.
     */
    void evictExpired(Instant now, ExecutorService executor) {
        List<SandboxId> expired = ctx.records.store().listExpired(now);
        List<Future<?>> actions = new ArrayList<>();
        for (SandboxId id : expired) {
            actions.add(executor.submit(() -> evict(id, now)));
        }
        for (Future<?> action : actions) {
            try {
                action.get();
            } catch (ExecutionException e) {
                log.atWarn().setCause(e.getCause()).log("timeout action failed");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void evict(SandboxId id, Instant now) {
        Optional<SandboxRecord> record = ctx.records.get(id);
        if (record.isEmpty()) {
            return;
        }
        TimeoutAction action = record.get().onTimeout();
        try {
            boolean done = switch (action) {
                case PAUSE -> pause.pauseIfExpired(id, record.get().timeoutPauseMode(), now).isPresent();
                case KILL -> kill.killIfExpired(id, now);
            };
            if (done) {
                log.atInfo().addKeyValue("sandbox_id", id.value()).addKeyValue("action", action).log("sandbox timed out");
                ctx.events.publish(new LifecycleEvent.TimedOut(id, ctx.now(), action));
            }
        } catch (AgentEnvException e) {
            if (e.kind() != ErrorKind.NOT_FOUND) {
                log.atWarn().addKeyValue("sandbox_id", id.value()).addKeyValue("action", action).setCause(e)
                        .log("timeout action failed; retrying on the next tick");
            }
        }
    }
}
