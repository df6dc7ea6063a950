package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.EnvdApi;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.EnvdLogPage;
import io.agentenv.spi.EnvdMetrics;
import io.agentenv.spi.GuestCommand;
import io.agentenv.spi.SandboxId;
import java.io.InputStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything the server asks of a sandbox's guest agent (envd), over the backend's {@link EnvdApi}: the guest lookup
 * {@link #runningEnvd}, metrics (sampled in the background into a bounded history per sandbox) and logs.
 *
 * <p>Guest I/O never holds the runtime map's monitor or an instance's call lock: the handle is looked up under the
 * monitor, the lock is released, then envd is called. So a slow or hung guest never blocks pause, kill or list.
 *
 * <p>Errors: NOT_FOUND (unknown or being killed), CONFLICT ("sandbox runtime is transitioning; retry" during a
 * transition; "... is paused" while paused), UPSTREAM_FAILED, which the API answers with 502, when the guest agent is
 * not connected, does not answer or refuses.
 */
public final class SandboxGuests implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SandboxGuests.class);
    private static final int ENVD_PAGE = 1000;

    private enum Phase {
        NEW,
        STARTED,
        CLOSED
    }

    private final Records records;
    private final SandboxRuntime runtime;
    private final PausedLogs pausedLogs;
    private final Duration closeWait;
    private final GuestSettings settings;
    private final Clock clock;
    private final MetricsHistory history;
    private final MetricsSampler sampler;
    private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.NEW);
    private volatile ScheduledExecutorService ticks;

    public SandboxGuests(Orchestrator orchestrator, GuestSettings settings, Clock clock) {
        this(
                orchestrator.records(),
                orchestrator.runtime(),
                orchestrator.events(),
                orchestrator.pausedLogs(),
                orchestrator.transitionWait(),
                settings,
                clock);
    }

    SandboxGuests(
            Records records,
            SandboxRuntime runtime,
            EventBus events,
            PausedLogs pausedLogs,
            Duration closeWait,
            GuestSettings settings,
            Clock clock) {
        this.records = requireNonNull(records, "records is null");
        this.runtime = requireNonNull(runtime, "runtime is null");
        this.pausedLogs = requireNonNull(pausedLogs, "pausedLogs is null");
        this.closeWait = requireNonNull(closeWait, "closeWait is null");
        this.settings = requireNonNull(settings, "settings is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.history = new MetricsHistory(settings.historyPerSandbox());
        this.sampler = new MetricsSampler(records, runtime, history, settings.sampleInterval());
        requireNonNull(events, "events is null").subscribe(event -> {
            if (event instanceof LifecycleEvent.Killed killed) {
                sampler.forget(killed.sandbox());
            }
        });
    }

    /** Starts sampling every running sandbox every {@link GuestSettings#sampleInterval()}. Call once. */
    public void start() {
        if (!phase.compareAndSet(Phase.NEW, Phase.STARTED)) {
            throw new IllegalStateException("sandbox guests were already started or closed");
        }
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(
                Thread.ofVirtual().name("aenv-metrics-sampler").factory());
        long every = settings.sampleInterval().toMillis();
        scheduler.scheduleWithFixedDelay(this::sampleTick, every, every, TimeUnit.MILLISECONDS);
        ticks = scheduler;
    }

    /**
     * The guest agent of a RUNNING sandbox: the record must be RUNNING, the live instance and its envd handle are
     * taken under the runtime lock, the state is checked again, and nothing is held when this returns. The store is
     * read outside the lock (it is on disk); the second check gives the same guarantee as reading it under the lock.
     */
    RunningEnvd runningEnvd(SandboxId id) {
        requireNonNull(id, "id is null");
        return OperationRunner.read(() -> {
            requireRunning(records.visible(id));
            SandboxRuntime.Guest guest = runtime.guest(id).orElseThrow(() -> transitioning());
            requireRunning(records.visible(id));
            EnvdApi envd = guest.envd()
                    .orElseThrow(() ->
                            new AgentEnvException(ErrorKind.UPSTREAM_FAILED, "sandbox guest agent is not connected"));
            return new RunningEnvd(id, guest.handle().generation(), envd);
        });
    }

    /**
     * Samples of the sandbox (any visible state) with {@code start <= timestamp <= end}, oldest first. A RUNNING
     * sandbox without any sample yet is sampled once now (best effort), so a fresh sandbox has a reading. NOT_FOUND;
     * INVALID_ARGUMENT when start is after end.
     */
    public List<EnvdMetrics> metrics(SandboxId id, Optional<Instant> start, Optional<Instant> end) {
        requireNonNull(id, "id is null");
        requireNonNull(start, "start is null");
        requireNonNull(end, "end is null");
        if (start.isPresent() && end.isPresent() && start.get().isAfter(end.get())) {
            throw AgentEnvException.invalidArgument("start must not be after end");
        }
        return OperationRunner.read(() -> {
            SandboxRecord record = records.visible(id);
            if (record.state() == SandboxState.RUNNING && history.size(id) == 0) {
                sampleNowIfLive(id);
            }
            return history.range(id, start.orElse(Instant.MIN), end.orElse(Instant.MAX));
        });
    }

    /** The newest sample of each visible sandbox among {@code ids} that has one (unknown ids are left out). */
    public Map<SandboxId, EnvdMetrics> latestMetrics(Collection<SandboxId> ids) {
        requireNonNull(ids, "ids is null");
        return OperationRunner.read(() -> {
            Map<SandboxId, EnvdMetrics> out = new LinkedHashMap<>();
            for (SandboxId id : ids) {
                Optional<SandboxRecord> record = records.get(id).filter(r -> r.state() != SandboxState.KILLING);
                if (record.isEmpty()) {
                    continue;
                }
                if (record.get().state() == SandboxState.RUNNING && history.size(id) == 0) {
                    sampleNowIfLive(id);
                }
                history.latest(id).ifPresent(m -> out.put(id, m));
            }
            return out;
        });
    }

    /**
     * envd's log and the processes' output, filtered and ordered as {@code query} says. A RUNNING sandbox's are read
     * live from envd's bounded journal (at most {@link GuestSettings#logPages()} pages; errors as {@link #runningEnvd});
     * a PAUSED sandbox's are the ones kept when it was paused (CONFLICT when none could be kept then).
     */
    public List<EnvdLogEntry> logs(SandboxId id, LogQuery query) {
        requireNonNull(id, "id is null");
        requireNonNull(query, "query is null");
        List<EnvdLogEntry> all = OperationRunner.read(() -> {
                    SandboxRecord record = records.visible(id);
                    return record.state() == SandboxState.PAUSED
                            ? keptLogs(record)
                            : Optional.<List<EnvdLogEntry>>empty();
                })
                .orElseGet(() -> liveLogs(id));
        Stream<EnvdLogEntry> matching = all.stream()
                .filter(e -> LogQuery.Level.ofEnvd(e.level()).compareTo(query.minLevel()) >= 0)
                .filter(e -> query.search().map(s -> e.message().contains(s)).orElse(true));
        if (query.cursor().isPresent()) {
            Instant at = query.cursor().get();
            matching = matching.filter(e -> query.direction() == LogQuery.Direction.FORWARD
                    ? !e.timestamp().isBefore(at)
                    : !e.timestamp().isAfter(at));
        }
        Comparator<EnvdLogEntry> order = Comparator.comparingLong(EnvdLogEntry::seq);
        return matching.sorted(query.direction() == LogQuery.Direction.FORWARD ? order : order.reversed())
                .limit(query.limit())
                .toList();
    }

    private Optional<List<EnvdLogEntry>> keptLogs(SandboxRecord record) {
        StoredState paused = record.paused().orElseThrow(() -> transitioning());
        Optional<List<EnvdLogEntry>> kept = pausedLogs.read(record.id(), paused);
        if (kept.isPresent()) {
            return kept;
        }
        // resumed (and its paused state deleted) between the state read and the file read?
        if (records.visible(record.id()).state() == SandboxState.PAUSED) {
            throw new AgentEnvException(
                    ErrorKind.CONFLICT,
                    "sandbox " + record.id().value()
                            + " is paused and its logs could not be kept when it was paused; resume it to read them");
        }
        return Optional.empty();
    }

    private List<EnvdLogEntry> liveLogs(SandboxId id) {
        RunningEnvd guest = runningEnvd(id);
        List<EnvdLogEntry> all = new ArrayList<>();
        long cursor = 0;
        for (int page = 0; page < settings.logPages(); page++) {
            long from = cursor;
            EnvdLogPage read = guestCall(guest, envd -> envd.logs(from, ENVD_PAGE));
            all.addAll(read.entries());
            if (read.entries().size() < ENVD_PAGE || read.nextCursor() <= cursor) {
                break;
            }
            cursor = read.nextCursor();
        }
        return all;
    }

    /**
     * Runs {@code command} in a RUNNING sandbox to its end, its output going to {@code output} as it arrives: work the
     * server itself does in a sandbox (a template build's steps). Errors as {@link #runningEnvd}; a command envd
     * refuses to start is UPSTREAM_FAILED with envd's reason (the caller wrote the command, so it is told why).
     */
    public GuestCommand.Exit run(SandboxId id, GuestCommand command, GuestCommand.Output output) {
        requireNonNull(command, "command is null");
        requireNonNull(output, "output is null");
        RunningEnvd guest = runningEnvd(id);
        try {
            return guest.envd().run(command, output);
        } catch (EnvdException.Rejected e) {
            throw new AgentEnvException(ErrorKind.UPSTREAM_FAILED, e.getMessage(), e);
        } catch (EnvdException e) {
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e).log("a command's stream broke off");
            throw new AgentEnvException(ErrorKind.UPSTREAM_FAILED, "sandbox guest agent stopped answering", e);
        }
    }

    /**
     * Writes the {@code length} bytes {@code content} opens to {@code path} in a RUNNING sandbox as {@code user}
     * (envd's {@code POST /files}: missing parents are created, a file there is replaced): files the server itself puts
     * into a sandbox (a template build's COPY steps). Errors as {@link #run}.
     */
    public void upload(SandboxId id, String path, String user, long length, Supplier<InputStream> content) {
        requireNonNull(path, "path is null");
        requireNonNull(user, "user is null");
        requireNonNull(content, "content is null");
        RunningEnvd guest = runningEnvd(id);
        try {
            guest.envd().upload(path, Optional.of(user), length, content);
        } catch (EnvdException.Rejected e) {
            throw new AgentEnvException(ErrorKind.UPSTREAM_FAILED, e.getMessage(), e);
        } catch (EnvdException e) {
            log.atWarn().addKeyValue("sandbox_id", id.value()).setCause(e).log("an upload broke off");
            throw new AgentEnvException(ErrorKind.UPSTREAM_FAILED, "sandbox guest agent stopped answering", e);
        }
    }

    /** One sampling round at {@code now} (the scheduler calls it every interval; tests call it directly). */
    MetricsSampler.Round sampleAll(Instant now) {
        return sampler.sampleAll(now);
    }

    MetricsHistory history() {
        return history;
    }

    /** Stops the sampler. Idempotent. */
    @Override
    public void close() {
        if (phase.getAndSet(Phase.CLOSED) == Phase.CLOSED) {
            return;
        }
        ScheduledExecutorService scheduler = ticks;
        if (scheduler != null) {
            scheduler.shutdownNow();
            try {
                scheduler.awaitTermination(closeWait.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void sampleTick() {
        try {
            MetricsSampler.Round round = sampler.sampleAll(clock.instant());
            log.atDebug()
                    .addKeyValue("sampled", round.count(MetricsSampler.Outcome.SAMPLED))
                    .addKeyValue("busy", round.count(MetricsSampler.Outcome.BUSY))
                    .addKeyValue("stale", round.count(MetricsSampler.Outcome.STALE))
                    .addKeyValue("failed", round.count(MetricsSampler.Outcome.FAILED))
                    .log("metrics round");
        } catch (RuntimeException e) {
            log.atWarn().setCause(e).log("metrics round failed");
        }
    }

    private void sampleNowIfLive(SandboxId id) {
        runtime.get(id).ifPresent(handle -> sampler.sample(handle, clock.instant()));
    }

    @FunctionalInterface
    private interface EnvdCall<T> {
        T call(EnvdApi envd) throws EnvdException;
    }

    private static <T> T guestCall(RunningEnvd guest, EnvdCall<T> call) {
        try {
            return call.call(guest.envd());
        } catch (EnvdException e) {
            String message = switch (e) {
                case EnvdException.Unreachable u -> "sandbox guest agent did not answer";
                case EnvdException.Rejected r -> "sandbox guest agent refused the request";
            };
            log.atWarn()
                    .addKeyValue("sandbox_id", guest.id().value())
                    .setCause(e)
                    .log(message);
            throw new AgentEnvException(ErrorKind.UPSTREAM_FAILED, message, e);
        }
    }

    private static void requireRunning(SandboxRecord record) {
        switch (record.state()) {
            case RUNNING -> {}
            case PAUSED ->
                throw new AgentEnvException(
                        ErrorKind.CONFLICT, "sandbox " + record.id().value() + " is paused");
            default -> throw transitioning();
        }
    }

    private static AgentEnvException transitioning() {
        return new AgentEnvException(ErrorKind.CONFLICT, "sandbox runtime is transitioning; retry");
    }
}
