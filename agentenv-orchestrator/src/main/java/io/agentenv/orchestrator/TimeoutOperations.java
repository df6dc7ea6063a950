package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.SandboxId;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TTLs: set (overwrite, may shorten), refresh (extend only) and eviction of RUNNING sandboxes whose TTL ran out.
 * Transitions in progress are waited out (bounded); paused sandboxes never expire.
 */
final class TimeoutOperations {
    private static final Logger log = LoggerFactory.getLogger(TimeoutOperations.class);

    private final PauseOperation pause;
    private final KillOperation kill;

    private final Records records;
    private final EventBus events;
    private final Clock clock;
    private final Duration transitionWait;

    TimeoutOperations(
            Records records,
            EventBus events,
            Clock clock,
            Duration transitionWait,
            PauseOperation pause,
            KillOperation kill) {
        this.records = requireNonNull(records, "records is null");
        this.events = requireNonNull(events, "events is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.transitionWait = requireNonNull(transitionWait, "transitionWait is null");
        this.pause = requireNonNull(pause, "pause is null");
        this.kill = requireNonNull(kill, "kill is null");
    }

    void setTimeout(SandboxId id, Duration timeout) {
        long deadline = StateSignals.deadline(transitionWait);
        while (true) {
            SandboxRecord record = records.visible(id);
            switch (record.state()) {
                case RUNNING -> {
                    if (records.updateTtl(
                            id,
                            SandboxState.RUNNING,
                            timeout,
                            Optional.of(clock.instant().plus(timeout)))) {
                        return;
                    }
                }
                case PAUSED -> {
                    if (records.updateTtl(id, SandboxState.PAUSED, timeout, Optional.empty())) {
                        return;
                    }
                }
                default -> records.awaitLeaving(id, record.state(), deadline);
            }
        }
    }

    void refresh(SandboxId id, Duration duration) {
        long deadline = StateSignals.deadline(transitionWait);
        while (true) {
            SandboxRecord record = records.visible(id);
            switch (record.state()) {
                case RUNNING -> {
                    Instant wanted = clock.instant().plus(duration);
                    Instant expiresAt =
                            record.expiresAt().filter(at -> at.isAfter(wanted)).orElse(wanted);
                    if (records.updateTtl(id, SandboxState.RUNNING, record.timeout(), Optional.of(expiresAt))) {
                        return;
                    }
                }
                case PAUSED -> {
                    return; // paused sandboxes have no running TTL to extend
                }
                default -> records.awaitLeaving(id, record.state(), deadline);
            }
        }
    }

    /**
     * Applies the timeout action to every RUNNING sandbox expired at {@code now}, concurrently on {@code executor},
     * and returns when all are done. Failures are logged and retried on the next call; a TTL extended meanwhile wins.
     */
    void evictExpired(Instant now, ExecutorService executor) {
        List<SandboxId> expired = records.store().listExpired(now);
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
        Optional<SandboxRecord> record = records.get(id);
        if (record.isEmpty()) {
            return;
        }
        TimeoutAction action = record.get().onTimeout();
        try {
            boolean done = switch (action) {
                case PAUSE ->
                    pause.pauseIfExpired(id, record.get().timeoutPauseMode(), now)
                            .isPresent();
                case KILL -> kill.killIfExpired(id, now);
            };
            if (done) {
                log.atInfo()
                        .addKeyValue("sandbox_id", id.value())
                        .addKeyValue("action", action)
                        .log("sandbox timed out");
                events.publish(new LifecycleEvent.TimedOut(id, clock.instant(), action));
            }
        } catch (AgentEnvException e) {
            if (e.kind() != ErrorKind.NOT_FOUND) {
                log.atWarn()
                        .addKeyValue("sandbox_id", id.value())
                        .addKeyValue("action", action)
                        .setCause(e)
                        .log("timeout action failed; retrying on the next tick");
            }
        }
    }
}
