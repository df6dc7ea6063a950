package io.agentenv.spi;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * One sandbox instance of a backend (an OCI container restored with CRIU, a microVM, ...). Created by
 * {@link SandboxBackendFactory#prepare}, which reserves what it needs without running anything; {@link #start} runs it.
 *
 * <p>The orchestrator guarantees that at most one lifecycle call (start, pause, freeze/thaw, snapshot, updateNetwork,
 * liveness) runs at a time on an instance, and never holds a lock while calling. {@link #guest()}, {@link #envd()} and
 * {@link #resources()} may be called concurrently with anything and must not block on I/O.
 */
public interface SandboxBackend extends AutoCloseable {
    /**
     * Boots or restores the instance and returns once the guest agent answers and has been initialised with the
     * {@link LaunchSpec}'s env vars, default user and access token. On failure the caller closes the instance.
     */
    void start(Duration readyTimeout) throws BackendException;

    /**
     * Pauses to disk. On success the instance is stopped (its RAM released) and the result holds everything needed to
     * resume it from {@code artifactDir}, which the orchestrator created, owns and deletes. On {@link
     * BackendException.Recoverable} the sandbox is running as before; on Terminal it must be closed.
     */
    PausedState pause(PauseMode mode, Path artifactDir) throws BackendException;

    /** Pauses in place (for example the cgroup freezer): processes stop, memory stays. Idempotent. */
    void freeze() throws BackendException;

    /** Undoes {@link #freeze()}. Idempotent. */
    void thaw() throws BackendException;

    /**
     * Captures memory and filesystem while staying up (the backend may freeze briefly). On success and on
     * {@link BackendException.Recoverable} the sandbox is running; on Terminal it must be closed. {@code artifactDir}
     * is created and owned by the orchestrator and must not be referenced by this instance afterwards.
     */
    SnapshotState snapshot(Path artifactDir) throws BackendException;

    /** Replaces the enforced network policy. Recoverable failures leave the previous policy in force. */
    void updateNetwork(NetworkPolicy policy) throws BackendException;

    /**
     * The host side of this instance's network (namespace path, host interaction IP), known from
     * {@link SandboxBackendFactory#prepare} on and not blocking on I/O. Sent to the custom extension's start hooks.
     * Empty when the backend has no per-sandbox network; the default.
     */
    default Optional<HostNetwork> hostNetwork() {
        return Optional.empty();
    }

    /**
     * Extra boot arguments returned by the custom extension's start-fresh hook, handed over after {@code prepare} and
     * before {@link #start} of a fresh (non-snapshot) launch, at most once. The backend maps them to its own
     * equivalent (a microVM: the kernel command line; the container backend: extra environment of the sandbox init)
     * and documents the mapping. The argument is not blank. A backend that cannot honour them fails, so a sandbox never
     * silently starts without what the operator's extension asked for; that is the default.
     */
    default void extraBootArgs(String arguments) throws BackendException {
        throw new BackendException.Recoverable("this backend does not support extra boot arguments");
    }

    /** How to reach the guest agent; empty while the instance is not running. */
    Optional<GuestEndpoint> guest();

    /**
     * The guest agent's API for this instance (one runtime generation): empty while the guest agent is not connected
     * (before {@link #start} succeeded, after {@link #pause} or {@link #close}). Must not block on I/O. The handle is
     * owned by this instance, which closes its connections when it stops, so a connection is never reused by another
     * generation. {@link #guest()} stays for the proxy, which forwards raw bytes to the same agent. The default is
     * empty: a backend without a guest agent.
     */
    default Optional<EnvdApi> envd() {
        return Optional.empty();
    }

    /**
     * Whether this started instance still exists. The orchestrator asks every running instance about once a second,
     * never while a lifecycle call runs on it; the answer must come quickly from local state (no guest calls, no waits).
     * {@link Liveness.Gone} means its processes are gone for good (the init exited, it was killed from outside): the
     * orchestrator then removes the sandbox like a kill ({@link #close()} releases what is left). A guest agent that
     * died and is being restarted inside a live instance is still {@link Liveness#ALIVE}. The default, for a backend
     * that cannot tell, is ALIVE. A failure to tell (an exception) is logged and counts as alive.
     */
    default Liveness liveness() throws BackendException {
        return Liveness.ALIVE;
    }

    /**
     * A reading of this running instance's resources taken by the host itself, without a call into the guest: the same
     * {@link EnvdMetrics} envd's {@code GET /metrics} answers, with the same meaning (CPU used since the previous
     * reading of this method, the first since the instance started; memory used without page cache; the sandbox's own
     * root filesystem). The orchestrator's metrics sampler prefers it to envd, so sampling does not wake the guest.
     * Called like {@link #liveness()}: never while a lifecycle call runs on the instance, and it must answer quickly
     * from host state (no guest calls, no processes started, nothing read through a path the sandbox controls). Empty
     * when the backend cannot read it (the default) or cannot right now (not running); the sampler then asks envd.
     * A failure to read is a {@link BackendException}; the sampler drops that round's sample.
     */
    default Optional<EnvdMetrics> hostMetrics() throws BackendException {
        return Optional.empty();
    }

    /** The real resources of this instance. */
    Resources resources();

    /** Stops the instance and releases everything it holds. Idempotent; "already gone" is success. */
    @Override
    void close() throws BackendException;

    /**
     * Stops the instance for good, as a kill does: returns once none of its processes runs any more. What it still
     * holds (disk, network, runtime state) may be released after the return, in the background; the backend owns that
     * release: a later {@link #close()} of this instance and {@link SandboxBackendFactory#shutdown()} wait for it, and
     * after a crash the next {@link SandboxBackendFactory#initialize} removes what is left, as for any instance no
     * record claims. Idempotent. The default closes the instance (everything released before the return).
     */
    default void kill() throws BackendException {
        close();
    }
}
