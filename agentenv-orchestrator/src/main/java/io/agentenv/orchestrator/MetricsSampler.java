package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdApi;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdMetrics;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxId;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples the metrics of running sandboxes into a {@link MetricsHistory}. Per sandbox, under a non-blocking try-lock
 * on the instance (a sandbox busy with a lifecycle call is skipped, never waited on): ask the backend for a host-side
 * reading ({@link SandboxBackend#hostMetrics()}: read from the host's view of the sandbox, so the guest is not woken;
 * quick, so it is taken under the instance's lock like a liveness check) and, when it has none, take the envd handle.
 * With a host reading, keep it if the instance is still the live one and the sandbox was RUNNING when the round began
 * ({@link Records#runningIds}: one store read per round at most). Otherwise check that it is RUNNING, release
 * everything, call envd, and keep the sample only if the same runtime generation is still the live, RUNNING one (a
 * sample from a runtime since paused, resumed or replaced is dropped).
 */
final class MetricsSampler {
    private static final Logger log = LoggerFactory.getLogger(MetricsSampler.class);

    enum Outcome {
        SAMPLED,
        FRESH,
        BUSY,
        NOT_RUNNING,
        NOT_CONNECTED,
        STALE,
        FAILED
    }

    /** What one round did, per sandbox. */
    record Round(Map<SandboxId, Outcome> outcomes) {
        Round {
            outcomes = Map.copyOf(outcomes);
        }

        long count(Outcome outcome) {
            return outcomes.values().stream().filter(o -> o == outcome).count();
        }
    }

    private final MetricsHistory history;
    private final Duration interval;
    private final Map<SandboxId, Instant> lastSampled = new ConcurrentHashMap<>();

    private final Records records;
    private final SandboxRuntime runtime;

    MetricsSampler(Records records, SandboxRuntime runtime, MetricsHistory history, Duration interval) {
        this.records = requireNonNull(records, "records is null");
        this.runtime = requireNonNull(runtime, "runtime is null");
        this.history = requireNonNull(history, "history is null");
        this.interval = requireNonNull(interval, "interval is null");
    }

    /**
     * One round at {@code now}: every live instance of a sandbox RUNNING at the round's start (one store read for all)
     * is sampled concurrently (virtual threads; each envd call bounded by the envd client's own timeout) unless it was
     * sampled less than half an interval ago. Returns when all are done. Also forgets the history of sandboxes that no
     * longer exist. A sandbox that becomes RUNNING during the round is sampled in the next one.
     */
    Round sampleAll(Instant now) {
        List<SandboxRuntime.Handle> handles = runtime.all();
        Set<SandboxId> runningAtStart = handles.isEmpty() ? Set.of() : records.runningIds();
        forgetRemoved(runningAtStart);
        Map<SandboxId, Outcome> outcomes = new ConcurrentHashMap<>();
        try (ExecutorService threads = Executors.newThreadPerTaskExecutor(
                Thread.ofVirtual().name("aenv-metrics-", 0).factory())) {
            Map<SandboxId, Future<Outcome>> running = new HashMap<>();
            for (SandboxRuntime.Handle handle : handles) {
                if (!runningAtStart.contains(handle.id())) {
                    outcomes.put(handle.id(), Outcome.NOT_RUNNING);
                    continue;
                }
                Instant last = lastSampled.get(handle.id());
                if (last != null && last.plus(interval.dividedBy(2)).isAfter(now)) {
                    outcomes.put(handle.id(), Outcome.FRESH);
                    continue;
                }
                running.put(handle.id(), threads.submit(() -> sample(handle, now, true, false)));
            }
            for (Map.Entry<SandboxId, Future<Outcome>> e : running.entrySet()) {
                outcomes.put(e.getKey(), outcome(e.getKey(), e.getValue()));
            }
        }
        return new Round(outcomes);
    }

    /** What the try-lock on the instance got: a host-side reading, or else the envd handle (empty: not connected). */
    private record Taken(Optional<EnvdMetrics> host, Optional<EnvdApi> envd) {}

    /**
     * Samples one live instance now (the API does this when a sandbox has no sample yet): unlike a round, it waits
     * for a call that holds the instance (a round's or a liveness check's reading, a lifecycle call) instead of
     * answering BUSY, since its caller wants a reading.
     */
    Outcome sample(SandboxRuntime.Handle handle, Instant now) {
        return sample(handle, now, false, true);
    }

    /**
     * @param runningAtStart whether the caller saw the sandbox RUNNING in this round's store read (so a host reading,
     *     taken under the instance's lock, is kept without another read); false: read the record
     * @param wait whether to wait for the instance's lock (else BUSY while another call holds it)
     */
    private Outcome sample(SandboxRuntime.Handle handle, Instant now, boolean runningAtStart, boolean wait) {
        SandboxId id = handle.id();
        Optional<Taken> taken;
        try {
            SandboxRuntime.BackendCall<Taken> take = backend -> {
                Optional<EnvdMetrics> host = backend.hostMetrics();
                return new Taken(host, host.isPresent() ? Optional.empty() : backend.envd());
            };
            taken = wait ? Optional.of(handle.call(take)) : handle.tryCall(take);
        } catch (BackendException e) {
            log.atDebug().addKeyValue("sandbox_id", id.value()).setCause(e).log("host metrics reading failed");
            return Outcome.FAILED;
        }
        if (taken.isEmpty()) {
            return Outcome.BUSY;
        }
        if (taken.get().host().isPresent()) {
            // read under the instance's lock, so from that instance while no lifecycle call ran on it
            if (!isLive(id, handle.generation()) || !(runningAtStart || isRunning(id))) {
                return Outcome.NOT_RUNNING;
            }
            history.add(id, taken.get().host().get());
            lastSampled.put(id, now);
            return Outcome.SAMPLED;
        }
        if (taken.get().envd().isEmpty()) {
            return Outcome.NOT_CONNECTED;
        }
        if (!runningAtStart && !isRunning(id)) {
            return Outcome.NOT_RUNNING;
        }
        EnvdMetrics sample;
        try {
            sample = taken.get().envd().get().metrics();
        } catch (EnvdException e) {
            log.atDebug().addKeyValue("sandbox_id", id.value()).setCause(e).log("metrics sample failed");
            return Outcome.FAILED;
        }
        if (!accept(id, handle.generation(), sample)) {
            log.atDebug()
                    .addKeyValue("sandbox_id", id.value())
                    .addKeyValue("generation", handle.generation())
                    .log("metrics sample dropped: its runtime is no longer the live one");
            return Outcome.STALE;
        }
        lastSampled.put(id, now);
        return Outcome.SAMPLED;
    }

    void forget(SandboxId id) {
        history.remove(id);
        lastSampled.remove(id);
    }

    private boolean accept(SandboxId id, long generation, EnvdMetrics sample) {
        if (!isLive(id, generation) || !isRunning(id)) {
            return false;
        }
        history.add(id, sample);
        return true;
    }

    /** Whether {@code generation} is still the sandbox's live instance (memory only). */
    private boolean isLive(SandboxId id, long generation) {
        Optional<SandboxRuntime.Handle> current = runtime.get(id);
        return current.isPresent() && current.get().generation() == generation;
    }

    private boolean isRunning(SandboxId id) {
        return records.get(id).map(r -> r.state() == SandboxState.RUNNING).orElse(false);
    }

    /** Forgets sandboxes that no longer exist; those RUNNING at the round's start do, without a read. */
    private void forgetRemoved(Set<SandboxId> running) {
        for (SandboxId id : history.sandboxes()) {
            if (!running.contains(id) && records.get(id).isEmpty()) {
                forget(id);
            }
        }
    }

    private static Outcome outcome(SandboxId id, Future<Outcome> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Outcome.FAILED;
        } catch (ExecutionException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", id.value())
                    .setCause(e.getCause())
                    .log("metrics sample failed");
            return Outcome.FAILED;
        }
    }
}
