package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendCapacity;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdTokens;
import io.agentenv.spi.GuestEndpoint;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control plane's single entry point for sandbox lifecycle operations; the API layer calls only this.
 *
 * <p>Rules shared by every method:
 * <ul>
 *   <li>Errors are {@link AgentEnvException}s carrying an {@link ErrorKind}; nothing else escapes except
 *       {@link NullPointerException}/{@link IllegalArgumentException} for programming errors.</li>
 *   <li>A sandbox in KILLING counts as not found (NOT_FOUND).</li>
 *   <li>Mutating operations run on an executor that outlives the caller: if the caller's thread is interrupted or the
 *       HTTP client disconnects, the operation still finishes (or rolls back) on its own.</li>
 *   <li>Waiting for another operation's transition is bounded by {@link OrchestratorSettings#transitionWait()}
 *       (60 s); running out gives CONFLICT.</li>
 *   <li>After {@link #shutdown()} has begun, mutating operations fail with UNAVAILABLE; reads keep working.</li>
 *   <li>A method returns only after its state change is durable in the {@link SandboxStore}.</li>
 *   <li>TTL: only RUNNING sandboxes expire; paused sandboxes never do.</li>
 * </ul>
 */
public final class Orchestrator {
    private static final Logger log = LoggerFactory.getLogger(Orchestrator.class);

    private enum Phase {
        NEW,
        STARTED,
        SHUT_DOWN
    }

    private final Records records;
    private final SandboxRuntime runtime;
    private final EventBus events;
    private final HookCalls hooks;
    private final TemplateCatalog templates;
    private final PausedLogs pausedLogs;
    private final Disposal disposal;
    private final OrchestratorSettings settings;
    private final Clock clock;
    private final OperationRunner runner = new OperationRunner();
    private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.NEW);
    private volatile ScheduledExecutorService scheduler;
    private final Artifacts artifacts;

    private final CreateOperation creates;
    private final KillOperation kills;
    private final PauseOperation pauses;
    private final ResumeOperation resumes;
    private final TimeoutOperations timeouts;
    private final ForkOperation forks;
    private final SnapshotOperation snapshots;
    private final NetworkUpdate networks;
    private final CustomExtensionParams params;
    private final Recovery recovery;
    private final LivenessCheck liveness;
    private final SandboxBackendFactory backends;

    /** Builds the orchestrator without a custom extension ({@link LifecycleHooks#none()}). */
    public Orchestrator(
            SandboxStore store,
            SandboxBackendFactory backends,
            EnvdTokens tokens,
            Clock clock,
            OrchestratorSettings settings,
            List<LifecycleListener> listeners) {
        this(store, backends, tokens, clock, settings, listeners, LifecycleHooks.none());
    }

    /** Builds the orchestrator for a server without volumes ({@link VolumeCatalog#NONE}). */
    public Orchestrator(
            SandboxStore store,
            SandboxBackendFactory backends,
            EnvdTokens tokens,
            Clock clock,
            OrchestratorSettings settings,
            List<LifecycleListener> listeners,
            LifecycleHooks hooks) {
        this(store, backends, tokens, clock, settings, listeners, hooks, VolumeCatalog.NONE, Optional.empty());
    }

    /**
     * Builds the orchestrator without doing I/O; call {@link #start()} before use. {@code shared} is where paused states
     * and snapshots are also stored for other nodes of a cluster to restore (empty for a lone server).
     */
    public Orchestrator(
            SandboxStore store,
            SandboxBackendFactory backends,
            EnvdTokens tokens,
            Clock clock,
            OrchestratorSettings settings,
            List<LifecycleListener> listeners,
            LifecycleHooks hooks,
            VolumeCatalog volumes,
            Optional<SharedArtifacts> shared) {
        requireNonNull(store, "store is null");
        requireNonNull(volumes, "volumes is null");
        requireNonNull(backends, "backends is null");
        requireNonNull(settings, "settings is null");
        this.settings = settings;
        this.backends = backends;
        this.clock = requireNonNull(clock, "clock is null");
        Ids ids = new Ids();
        this.records = new Records(store, new StateSignals());
        this.runtime = new SandboxRuntime();
        this.events = new EventBus(listeners);
        this.hooks = new HookCalls(hooks);
        this.artifacts = new Artifacts(settings.artifactRoot(), ids, shared);
        this.templates = new TemplateCatalog(backends, store, artifacts);
        this.pausedLogs = new PausedLogs(backends);
        LaunchSpecs specs = new LaunchSpecs(tokens, settings.defaultUser(), volumes);
        this.disposal = new Disposal(records, runtime, artifacts, this.hooks, events, clock);
        Duration transitionWait = settings.transitionWait();

        Launcher launcher =
                new Launcher(records, runtime, backends, specs, ids, this.hooks, clock, settings.readyTimeout());
        Captures captures = new Captures(records, runtime, artifacts, disposal);
        this.creates = new CreateOperation(
                templates, backends, ids, this.hooks, events, clock, launcher, settings.defaultUser(), volumes);
        this.kills =
                new KillOperation(records, runtime, backends, artifacts, this.hooks, events, clock, transitionWait);
        this.pauses =
                new PauseOperation(records, runtime, artifacts, this.hooks, disposal, events, clock, transitionWait);
        this.resumes = new ResumeOperation(
                records,
                runtime,
                backends,
                specs,
                ids,
                this.hooks,
                artifacts,
                events,
                clock,
                settings.readyTimeout(),
                transitionWait);
        this.timeouts = new TimeoutOperations(records, events, clock, transitionWait, pauses, kills);
        this.forks = new ForkOperation(captures, launcher, artifacts, ids, events, clock, settings.forkParallelism());
        this.snapshots = new SnapshotOperation(captures, templates, records, ids, artifacts, events, clock);
        this.networks = new NetworkUpdate(records, runtime, disposal);
        this.params = new CustomExtensionParams(records, this.hooks);
        this.recovery = new Recovery(records, runtime, backends, specs, artifacts, this.hooks, events, clock);
        this.liveness = new LivenessCheck(records, runtime, kills);
    }

    /** What the backend holds now (slots in use, warm pool stock); empty when the backend does not keep count. */
    public Optional<BackendCapacity> capacity() {
        return backends.capacity();
    }

    /**
     * Reconciles what the store holds with what the backend still runs (restart recovery), then starts the TTL
     * eviction scheduler. Call once, before serving. PAUSED records stay resumable (removed if their paused state cannot
     * be decoded); RUNNING records, and PAUSING/SNAPSHOTTING/FORKING ones whose operation was cut short, are re-attached
     * and RUNNING if the backend still runs them, else removed; RESUMING goes back to PAUSED; CREATING and KILLING
     * records are finished off (any surviving instance closed, the record removed). Every removal is logged with its
     * reason and published as a Killed event; artifact directories no record refers to are deleted. Every tick also
     * removes running sandboxes whose instance died on its own ({@code SandboxBackend.liveness()}).
     */
    public void start() {
        if (!phase.compareAndSet(Phase.NEW, Phase.STARTED)) {
            throw new IllegalStateException("the orchestrator was already started");
        }
        recovery.run();
        ScheduledExecutorService ticks = Executors.newSingleThreadScheduledExecutor(
                Thread.ofVirtual().name("aenv-ttl-eviction").factory());
        long interval = settings.evictionInterval().toMillis();
        ticks.scheduleWithFixedDelay(this::evictNow, interval, interval, TimeUnit.MILLISECONDS);
        if (artifacts.shared()) { // copies of states other nodes took over go once they are not this node's
            ticks.scheduleWithFixedDelay(this::sweepArtifactCopies, 1, 1, TimeUnit.MINUTES);
        }
        scheduler = ticks;
    }

    /**
     * Creates and starts a sandbox from a built-in template or a snapshot (id or alias). Returns once it is RUNNING,
     * with TTL {@code now + timeout}.
     * With a custom extension, start-fresh (built-in template) or start-resume (snapshot) is called between prepare and
     * start; a snapshot's params are inherited unless the request names non-empty params of its own.
     * Errors: INVALID_ARGUMENT (unknown template: "template X not found"; bad network entries; non-empty
     * customExtensionParams while no custom extension is configured; the start hook refused with 4xx),
     * UPSTREAM_FAILED (the start hook failed: 5xx, timeout, connection failure, unusable answer), RESOURCE_EXHAUSTED
     * (the backend is at capacity, e.g. every network slot in use: "too many sandboxes: ..."), INTERNAL (the
     * backend failed). On every failure each launch stage is rolled back, a stop hook follows a sent start hook,
     * nothing leaks and no record remains. UNAVAILABLE.
     */
    public SandboxView create(CreateSandbox request) {
        requireNonNull(request, "request is null");
        CreateOperation.validate(request, hooks.enabled());
        return runner.mutate(() -> creates.create(request));
    }

    /**
     * Adds a listener for lifecycle events published from now on, for parts built after the orchestrator (the API's
     * metrics). Same delivery rules as the listeners given to the constructor.
     */
    public void subscribe(LifecycleListener listener) {
        events.subscribe(listener);
    }

    /** For {@link SandboxGuests} (built by the composition root after this): the live instances by id. */
    SandboxRuntime runtime() {
        return runtime;
    }

    /** For {@link SandboxGuests}: lifecycle events (it forgets a killed sandbox's metrics). */
    EventBus events() {
        return events;
    }

    /** For {@link SandboxGuests}: a paused sandbox's kept journal. */
    PausedLogs pausedLogs() {
        return pausedLogs;
    }

    /** For {@link SandboxGuests}: how long its close waits for a sampling tick. */
    Duration transitionWait() {
        return settings.transitionWait();
    }

    /** The sandbox in any visible state. NOT_FOUND when missing or KILLING. Never waits. */
    public SandboxView get(SandboxId id) {
        requireNonNull(id, "id is null");
        return OperationRunner.read(() -> SandboxView.of(records.visible(id)));
    }

    /**
     * How to reach the guest agent (envd) of a RUNNING sandbox, for the proxy; empty while it is in any other state or
     * has no live instance. NOT_FOUND when missing or KILLING. Never waits, never blocks on the backend.
     */
    public Optional<GuestEndpoint> guestEndpoint(SandboxId id) {
        return route(id).endpoint();
    }

    /**
     * The sandbox proxy's lookup on every request, from memory (no store read once the record was read): the state as
     * of the last state change that returned, the guest endpoint of the live instance while RUNNING, the access rules.
     * NOT_FOUND when missing or KILLING. Never waits, never blocks on the backend.
     */
    public GuestRoute route(SandboxId id) {
        requireNonNull(id, "id is null");
        return OperationRunner.read(() -> {
            SandboxRecord record = records.cachedVisible(id);
            Optional<GuestEndpoint> endpoint = record.state() == SandboxState.RUNNING
                    ? runtime.get(id).flatMap(handle -> handle.backend().guest())
                    : Optional.empty();
            return new GuestRoute(
                    id,
                    record.state(),
                    endpoint,
                    record.secure(),
                    record.network().publicTraffic(),
                    record.autoResume(),
                    record.maskRequestHost());
        });
    }

    /** A page of sandboxes (KILLING never listed), ordered by (startedAt, id); {@code next} only when more remain. */
    public Page<SandboxView> list(SandboxQuery query) {
        requireNonNull(query, "query is null");
        return OperationRunner.read(() -> {
            Page<SandboxRecord> page = records.store().list(query);
            return new Page<>(page.items().stream().map(SandboxView::of).toList(), page.next());
        });
    }

    /**
     * Kills the sandbox: CAS {RUNNING, PAUSED} to KILLING, stop, delete the record and its artifacts. Waits out a
     * transition in progress (bounded), then retries. NOT_FOUND when missing or already being killed; CONFLICT when the
     * wait runs out; INTERNAL when the backend cannot stop it (the previous state is restored).
     */
    public void kill(SandboxId id) {
        requireNonNull(id, "id is null");
        runner.mutate(() -> {
            kills.kill(id);
            return null;
        });
    }

    /**
     * Pauses a RUNNING sandbox to disk (CAS RUNNING to PAUSING, then PAUSED with the paused state durable). A concurrent
     * pause is joined (JOINED); an already PAUSED sandbox gives ALREADY_PAUSED. The TTL is cleared.
     * Errors: NOT_FOUND (missing or KILLING), CONFLICT (any other transitional state, e.g. CREATING, RESUMING, FORKING,
     * SNAPSHOTTING), INTERNAL (a recoverable backend failure leaves it RUNNING; a terminal one removes it).
     */
    public PauseOutcome pause(SandboxId id, PauseMode mode) {
        requireNonNull(id, "id is null");
        requireNonNull(mode, "mode is null");
        return runner.mutate(() -> pauses.pause(id, mode));
    }

    /**
     * E2B connect. RUNNING (or a transition that ends RUNNING: CREATING, RESUMING, SNAPSHOTTING, FORKING, waited out
     * bounded): the TTL is only extended to at least {@code now + timeout} and the outcome is ALREADY_RUNNING.
     * PAUSING or PAUSED: waits for the pause, resumes with TTL {@code now + timeout}, outcome RESUMED (a concurrent
     * resume is joined). NOT_FOUND when missing or KILLING; RESOURCE_EXHAUSTED when the backend is at capacity;
     * INTERNAL when resuming fails; INVALID_ARGUMENT when the
     * start-resume hook refuses (4xx), UPSTREAM_FAILED when it fails. On any failure it stays PAUSED, state intact.
     */
    public ConnectResult connect(SandboxId id, Duration timeout) {
        requireNonNull(id, "id is null");
        requireNotNegative(timeout);
        return runner.mutate(() -> resumes.run(id, timeout, ResumeOperation.Mode.CONNECT));
    }

    /**
     * The deprecated resume route: PAUSED to RUNNING with TTL {@code now + timeout} (joins a concurrent resume). A
     * RUNNING sandbox only gets its TTL set to {@code now + timeout}. NOT_FOUND, CONFLICT (other transitional states,
     * or the start-resume hook refused with 4xx), UPSTREAM_FAILED (the hook failed), INTERNAL; it stays PAUSED.
     */
    public SandboxView resume(SandboxId id, Duration timeout) {
        requireNonNull(id, "id is null");
        requireNotNegative(timeout);
        return runner.mutate(
                () -> resumes.run(id, timeout, ResumeOperation.Mode.RESUME).view());
    }

    /**
     * Overwrites the TTL of a RUNNING sandbox with {@code now + timeout}; may shorten it. A PAUSED sandbox only has the
     * duration recorded (paused sandboxes never expire). A transition in progress is waited out first (bounded).
     * NOT_FOUND when missing or KILLING; INVALID_ARGUMENT for a negative timeout.
     */
    public void setTimeout(SandboxId id, Duration timeout) {
        requireNonNull(id, "id is null");
        requireNotNegative(timeout);
        runner.mutate(() -> {
            timeouts.setTimeout(id, timeout);
            return null;
        });
    }

    /**
     * Extends the TTL of a RUNNING sandbox to at least {@code now + duration}; never shortens; a no-op while PAUSED.
     * Same waits and errors as setTimeout.
     */
    public void refresh(SandboxId id, Duration duration) {
        requireNonNull(id, "id is null");
        requireNotNegative(duration);
        runner.mutate(() -> {
            timeouts.refresh(id, duration);
            return null;
        });
    }

    /**
     * Forks a RUNNING sandbox into {@code count} (1..100) children: CAS RUNNING to FORKING, snapshot it, back to
     * RUNNING (its TTL untouched), then restore the children concurrently. Children get new ids, startedAt = now and
     * TTL {@code timeout} or, when empty, the source's timeout duration, counted from now. One result per child in
     * order; a child that fails is rolled back and reported in its slot, classified like a create (a refused
     * start-resume hook INVALID_ARGUMENT, a failed one UPSTREAM_FAILED, a backend at capacity RESOURCE_EXHAUSTED). Errors (before any child): NOT_FOUND,
     * CONFLICT (not RUNNING), INVALID_ARGUMENT (count), INTERNAL (capture failed: recoverable leaves the source
     * RUNNING, terminal removes it).
     */
    public List<ForkResult> fork(SandboxId id, int count, Optional<Duration> timeout) {
        requireNonNull(id, "id is null");
        requireNonNull(timeout, "timeout is null");
        ForkOperation.validate(count, timeout);
        return runner.mutate(() -> forks.fork(id, count, timeout));
    }

    /**
     * Captures a RUNNING sandbox into the catalog (CAS RUNNING to SNAPSHOTTING, back to RUNNING; TTL untouched). The
     * optional name ({@code [A-Za-z0-9_-]{1,128}}) becomes an alias, moved from an older snapshot that had it.
     * Errors: NOT_FOUND, CONFLICT (not RUNNING), INVALID_ARGUMENT (bad name), INTERNAL (recoverable: still RUNNING;
     * terminal: removed).
     */
    public SnapshotView snapshot(SandboxId id, Optional<String> name) {
        requireNonNull(id, "id is null");
        requireNonNull(name, "name is null");
        snapshots.validate(name);
        return runner.mutate(() -> snapshots.snapshot(id, name));
    }

    /**
     * Captures a RUNNING sandbox as a template build's result: like {@link #snapshot}, with several aliases (the
     * template's id and names, each moved from the snapshot that had it) and {@code extraEnv} over the sandbox's own
     * environment as the default environment of the sandboxes created from it, and {@code defaults} as their default
     * user and working directory.
     */
    public SnapshotView snapshotAsTemplate(
            SandboxId id, List<String> aliases, Map<String, String> extraEnv, GuestDefaults defaults) {
        requireNonNull(id, "id is null");
        requireNonNull(aliases, "aliases is null");
        requireNonNull(extraEnv, "extraEnv is null");
        requireNonNull(defaults, "defaults is null");
        aliases.forEach(alias -> snapshots.validate(Optional.of(alias)));
        return runner.mutate(
                () -> snapshots.capture(id, List.copyOf(aliases), Map.copyOf(extraEnv), Optional.of(defaults)));
    }

    /** Snapshots in the catalog, newest first. */
    public Page<SnapshotView> listSnapshots(SnapshotQuery query) {
        requireNonNull(query, "query is null");
        return OperationRunner.read(() -> snapshots.list(query));
    }

    /** The backend's built-in templates, newest first; {@code limit} 0..1000. Snapshots are listed by {@link #listSnapshots}. */
    public Page<TemplateView> listTemplates(int limit, Optional<Cursor> after) {
        if (limit < 0 || limit > 1000) {
            throw new IllegalArgumentException("limit out of range: " + limit);
        }
        requireNonNull(after, "after is null");
        return OperationRunner.read(() -> templates.listBuiltIn(limit, after));
    }

    /** A built-in template or a snapshot by id or alias, as a create would resolve it; empty when there is none. */
    public Optional<TemplateView> findTemplate(String idOrAlias) {
        requireNonNull(idOrAlias, "idOrAlias is null");
        return OperationRunner.read(() -> templates.find(idOrAlias));
    }

    /**
     * Deletes a snapshot by id or alias, with its artifacts. Returns false when there is no such snapshot (built-in
     * templates are not deletable: INVALID_ARGUMENT). Sandboxes already created from it are unaffected.
     */
    public boolean deleteTemplate(String idOrAlias) {
        requireNonNull(idOrAlias, "idOrAlias is null");
        return runner.mutate(() -> snapshots.delete(idOrAlias));
    }

    /**
     * Makes an unpacked image's root filesystem the backend's built-in template {@code id} (see
     * {@link SandboxBackendFactory#addImageTemplate}), prepared at its boot by {@code preparation}. INTERNAL when the
     * backend cannot.
     */
    public TemplateView addImageTemplate(TemplateId id, Path rootfs, String preparation) {
        requireNonNull(id, "id is null");
        requireNonNull(rootfs, "rootfs is null");
        requireNonNull(preparation, "preparation is null");
        try {
            backends.addImageTemplate(id, rootfs, preparation);
        } catch (BackendException e) {
            throw new AgentEnvException(ErrorKind.INTERNAL, "image template " + id + ": " + e.getMessage(), e);
        }
        return findTemplate(id.value())
                .orElseThrow(() -> new AgentEnvException(
                        ErrorKind.INTERNAL, "image template " + id + " was added but is not found"));
    }

    /** For {@link TemplateRegistry}: how a create resolves {@code name:tag} to the snapshot the tag names. */
    void resolveTagsWith(Function<String, TemplateId> resolver) {
        templates.resolveTagsWith(resolver);
    }

    /** The stored custom extension params as a raw JSON object ({@code "{}"} when none). NOT_FOUND. */
    public String customExtensionParams(SandboxId id) {
        requireNonNull(id, "id is null");
        return OperationRunner.read(() -> params.get(id));
    }

    /**
     * Patches the custom extension params of a RUNNING sandbox with a raw JSON object: the extension's patch-params
     * hook (called with no lock held) answers the full new params, which are stored only if the sandbox is still
     * RUNNING. Returns the stored params. NOT_FOUND; CONFLICT when not RUNNING, or when it left RUNNING while the hook
     * ran (nothing changed); INVALID_ARGUMENT when the hook refuses (4xx); UPSTREAM_FAILED when it fails. Concurrent
     * patches: the last write wins. Without a configured extension a non-empty object is INVALID_ARGUMENT and
     * {@code "{}"} changes nothing.
     */
    public String patchCustomExtensionParams(SandboxId id, String rawJsonObject) {
        requireNonNull(id, "id is null");
        requireNonNull(rawJsonObject, "rawJsonObject is null");
        return runner.mutate(() -> params.patch(id, rawJsonObject));
    }

    /**
     * Replaces the network policy of a RUNNING sandbox: validated (IP addresses or CIDR blocks; anything else is
     * INVALID_ARGUMENT), enforced by the backend, then stored. NOT_FOUND; CONFLICT when not RUNNING; INTERNAL when the
     * backend refuses (the old policy stays).
     */
    public void updateNetwork(SandboxId id, NetworkPolicy policy) {
        requireNonNull(id, "id is null");
        requireNonNull(policy, "policy is null");
        NetworkRules.validate(policy);
        runner.mutate(() -> {
            networks.update(id, policy);
            return null;
        });
    }

    /**
     * Graceful shutdown: refuses new mutating operations (UNAVAILABLE), stops the eviction scheduler, waits for
     * in-flight operations (bounded), pauses every RUNNING sandbox (so it is resumable after a restart), and closes
     * what is left. Idempotent. The store is not closed (its owner closes it).
     */
    public void shutdown() {
        if (!runner.beginShutdown()) {
            return; // already shut down
        }
        phase.set(Phase.SHUT_DOWN);
        Duration wait = settings.transitionWait();
        ScheduledExecutorService ticks = scheduler;
        try {
            if (ticks != null) {
                ticks.shutdown();
            }
            runner.awaitIdle(wait);
            if (ticks != null) {
                ticks.awaitTermination(wait.toMillis(), TimeUnit.MILLISECONDS);
            }
            pauseAllRunning();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            for (SandboxRuntime.Handle handle : runtime.all()) {
                log.atError()
                        .addKeyValue("sandbox_id", handle.id().value())
                        .log("sandbox could not be preserved at shutdown; stopping it");
                runtime.detach(handle);
                disposal.closeQuietly(handle);
                hooks.stopLater(handle.id(), disposal.instanceOf(handle.id()));
            }
            runner.stopExecutor(wait);
            events.close();
        }
        log.atInfo().log("orchestrator shut down");
    }

    /** Deletes this node's copies of paused states and snapshots that are no longer its own (shared storage only). */
    void sweepArtifactCopies() {
        try {
            artifacts.sweepCopies(
                    () -> records.store().all().stream()
                            .map(r -> r.id().value())
                            .collect(java.util.stream.Collectors.toSet()),
                    id -> records.store().findSnapshot(id).isPresent());
        } catch (RuntimeException e) {
            log.atWarn().setCause(e).log("sweeping artifact copies failed; the next sweep tries again");
        }
    }

    /** Applies TTL actions due at {@code now} and returns when they are done (the scheduler calls it every tick). */
    void evictExpired(Instant now) {
        runner.ifAdmitted(() -> timeouts.evictExpired(now, runner.executor()));
    }

    /**
     * Asks every running instance whether it still exists and removes the ones that died on their own like a kill
     * (Killed event; the sandbox is gone: 404). The scheduler calls it every tick; empty once shutdown began.
     */
    Optional<LivenessCheck.Round> checkLiveness() {
        AtomicReference<LivenessCheck.Round> round = new AtomicReference<>();
        runner.ifAdmitted(() -> round.set(liveness.checkAll(runner.executor())));
        return Optional.ofNullable(round.get());
    }

    private void evictNow() {
        try {
            checkLiveness();
        } catch (RuntimeException e) {
            log.atWarn().setCause(e).log("liveness check tick failed");
        }
        try {
            evictExpired(clock.instant());
        } catch (RuntimeException e) {
            log.atWarn().setCause(e).log("TTL eviction tick failed");
        }
    }

    private void pauseAllRunning() throws InterruptedException {
        List<Future<?>> pausing = new ArrayList<>();
        for (SandboxRecord record : records.store().all()) {
            if (record.state() == SandboxState.RUNNING) {
                pausing.add(runner.executor().submit(() -> {
                    try {
                        pauses.pause(record.id(), PauseMode.WITH_MEMORY);
                    } catch (RuntimeException e) {
                        log.atError()
                                .addKeyValue("sandbox_id", record.id().value())
                                .setCause(e)
                                .log("pause at shutdown failed");
                    }
                }));
            }
        }
        for (Future<?> pause : pausing) {
            try {
                pause.get();
            } catch (ExecutionException e) {
                log.atError().setCause(e.getCause()).log("pause at shutdown failed");
            }
        }
    }

    private static void requireNotNegative(Duration duration) {
        requireNonNull(duration, "duration is null");
        if (duration.isNegative()) {
            throw AgentEnvException.invalidArgument("timeout must not be negative");
        }
    }

    /** For tests in this package: the runtime registry and signal monitors, which backend calls must never hold. */
    List<Object> internalMonitors() {
        return List.of(runtime.monitor(), records.signalMonitor());
    }

    /** The store plus state signals, for {@link SandboxGuests} and for tests in this package that play an operation. */
    Records records() {
        return records;
    }
}
