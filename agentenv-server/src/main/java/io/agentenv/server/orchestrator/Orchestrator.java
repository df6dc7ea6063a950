package io.agentenv.server.orchestrator;

import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SandboxId;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

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
    private final SandboxStore store;
    private final SandboxBackendFactory backends;
    private final EnvdTokenSource tokens;
    private final Clock clock;
    private final OrchestratorSettings settings;
    private final List<LifecycleListener> listeners;

    public Orchestrator(SandboxStore store, SandboxBackendFactory backends, EnvdTokenSource tokens, Clock clock,
                        OrchestratorSettings settings, List<LifecycleListener> listeners) {
        this.store = requireNonNull(store, "store is null");
        this.backends = requireNonNull(backends, "backends is null");
        this.tokens = requireNonNull(tokens, "tokens is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.settings = requireNonNull(settings, "settings is null");
        this.listeners = List.copyOf(listeners);
    }

    /**
     * Reconciles what the store holds with what the backend still runs (restart recovery), then starts the TTL
     * eviction scheduler. Call once, before serving. PAUSED records stay resumable; a RUNNING record is re-attached if
     * the backend still runs it, else kept as PAUSED when it has a paused state, else removed (logged with a reason);
     * records in a transitional state are resolved the same way (RESUMING back to PAUSED).
     */
    public void start() {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /**
     * Creates and starts a sandbox from a built-in template or a snapshot (id or alias). Returns once it is RUNNING,
     * with TTL {@code now + timeout}.
     * Errors: INVALID_ARGUMENT (unknown template: "template X not found"; bad network entries; non-empty
     * customExtensionParams while no custom extension is configured), INTERNAL (the backend failed: every launch stage
     * is rolled back, nothing leaks and no record remains), UNAVAILABLE.
     */
    public SandboxView create(CreateSandbox request) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /** The sandbox in any visible state. NOT_FOUND when missing or KILLING. Never waits. */
    public SandboxView get(SandboxId id) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /** A page of sandboxes (KILLING never listed), ordered by (startedAt, id); {@code next} only when more remain. */
    public Page<SandboxView> list(SandboxQuery query) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /**
     * Kills the sandbox: CAS {RUNNING, PAUSED} to KILLING, stop, delete the record and its artifacts. Waits out a
     * transition in progress (bounded), then retries. NOT_FOUND when missing or already being killed; CONFLICT when the
     * wait runs out; INTERNAL when the backend cannot stop it (the previous state is restored).
     */
    public void kill(SandboxId id) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /**
     * Pauses a RUNNING sandbox to disk (CAS RUNNING to PAUSING, then PAUSED with the paused state durable). A concurrent
     * pause is joined (JOINED); an already PAUSED sandbox gives ALREADY_PAUSED. The TTL is cleared.
     * Errors: NOT_FOUND (missing or KILLING), CONFLICT (any other transitional state, e.g. CREATING, RESUMING, FORKING,
     * SNAPSHOTTING), INTERNAL (a recoverable backend failure leaves it RUNNING; a terminal one removes it).
     */
    public PauseOutcome pause(SandboxId id, PauseMode mode) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /**
     * E2B connect. RUNNING (or a transition that ends RUNNING: CREATING, RESUMING, SNAPSHOTTING, FORKING, waited out
     * bounded): the TTL is only extended to at least {@code now + timeout} and the outcome is ALREADY_RUNNING.
     * PAUSING or PAUSED: waits for the pause, resumes with TTL {@code now + timeout}, outcome RESUMED (a concurrent
     * resume is joined). NOT_FOUND when missing or KILLING; INTERNAL when resuming fails (it stays PAUSED).
     */
    public ConnectResult connect(SandboxId id, Duration timeout) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /**
     * The deprecated resume route: PAUSED to RUNNING with TTL {@code now + timeout} (joins a concurrent resume). A
     * RUNNING sandbox only gets its TTL set to {@code now + timeout}. NOT_FOUND, CONFLICT (other transitional states),
     * INTERNAL (stays PAUSED).
     */
    public SandboxView resume(SandboxId id, Duration timeout) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /**
     * Overwrites the TTL with {@code now + timeout}; may shorten it. Applies to RUNNING (and CREATING/RESUMING, whose
     * TTL is set when they finish); a PAUSED sandbox only has its timeout duration recorded for its next resume.
     * NOT_FOUND when missing or KILLING.
     */
    public void setTimeout(SandboxId id, Duration timeout) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /** Extends the TTL to at least {@code now + duration}; never shortens. Same states and errors as setTimeout. */
    public void refresh(SandboxId id, Duration duration) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /**
     * Forks a RUNNING sandbox into {@code count} (1..100) children: CAS RUNNING to FORKING, snapshot it, back to
     * RUNNING (its TTL untouched), then restore the children concurrently. Children get new ids, startedAt = now and
     * TTL {@code timeout} or, when empty, the source's timeout duration, counted from now. One result per child in
     * order; a child that fails is rolled back and reported in its slot. Errors (before any child): NOT_FOUND,
     * CONFLICT (not RUNNING), INVALID_ARGUMENT (count), INTERNAL (capture failed: recoverable leaves the source
     * RUNNING, terminal removes it).
     */
    public List<ForkResult> fork(SandboxId id, int count, Optional<Duration> timeout) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /**
     * Captures a RUNNING sandbox into the catalog (CAS RUNNING to SNAPSHOTTING, back to RUNNING; TTL untouched). The
     * optional name ({@code [A-Za-z0-9_-]{1,128}}) becomes an alias, moved from an older snapshot that had it.
     * Errors: NOT_FOUND, CONFLICT (not RUNNING), INVALID_ARGUMENT (bad name), INTERNAL (recoverable: still RUNNING;
     * terminal: removed).
     */
    public SnapshotView snapshot(SandboxId id, Optional<String> name) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /** Snapshots in the catalog, newest first. */
    public Page<SnapshotView> listSnapshots(SnapshotQuery query) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /**
     * Deletes a snapshot by id or alias, with its artifacts. Returns false when there is no such snapshot (built-in
     * templates are not deletable: INVALID_ARGUMENT). Sandboxes already created from it are unaffected.
     */
    public boolean deleteTemplate(String idOrAlias) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /** The stored custom extension params as a raw JSON object ({@code "{}"} when none). NOT_FOUND. */
    public String customExtensionParams(SandboxId id) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /**
     * Patches the custom extension params of a RUNNING sandbox with a raw JSON object. Until custom extensions exist
     * (a later issue) none is configured, so a non-empty object is INVALID_ARGUMENT and {@code "{}"} changes nothing.
     * Returns the stored params. NOT_FOUND; CONFLICT when not RUNNING.
     */
    public String patchCustomExtensionParams(SandboxId id, String rawJsonObject) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /**
     * Replaces the network policy of a RUNNING sandbox: validated (IP addresses or CIDR blocks; anything else is
     * INVALID_ARGUMENT), enforced by the backend, then stored. NOT_FOUND; CONFLICT when not RUNNING; INTERNAL when the
     * backend refuses (the old policy stays).
     */
    public void updateNetwork(SandboxId id, NetworkPolicy policy) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /**
     * Graceful shutdown: refuses new mutating operations (UNAVAILABLE), stops the eviction scheduler, waits for
     * in-flight operations (bounded), pauses every RUNNING sandbox (so it is resumable after a restart), and closes
     * what is left. Idempotent. The store is not closed (its owner closes it).
     */
    public void shutdown() {
        throw new UnsupportedOperationException("not implemented yet");
    }
}
