package io.agentenv.spi;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A kind of backend, found by {@link #name()} through {@link java.util.ServiceLoader}. Implementations must be safe for
 * concurrent use: the orchestrator prepares many sandboxes at once (fork restores children concurrently).
 */
public interface SandboxBackendFactory {
    /** The name the server is configured with (AENV_BACKEND), for example {@code container}. */
    String name();

    /**
     * Called once by the server after loading the factory and before any other call except {@link #name()}: reads the
     * settings and checks the host (fail fast with a clear message). Instances of a previous run are left alone here:
     * restart recovery asks for them through {@link #reattach}. The default does nothing.
     */
    default void initialize(BackendContext context) throws BackendException {}

    /**
     * Called once after restart recovery with the ids of every sandbox the server still runs (re-attached); the backend
     * removes whatever else of a previous run it finds on the host (instances, network slots, mounts, cgroups), since no
     * record refers to it any more. Paused sandboxes hold no live resources and are not listed. The default does
     * nothing.
     */
    default void reapUnclaimed(Set<SandboxId> running) throws BackendException {}

    /** Called once at server shutdown, after the orchestrator closed or paused every instance. Idempotent. */
    default void shutdown() {}

    /**
     * What the backend holds now (slots in use, warm pool stock), for the server's host overview; empty when the
     * backend does not keep count (the default).
     */
    default Optional<BackendCapacity> capacity() {
        return Optional.empty();
    }

    /** The templates this backend boots without a snapshot; at least {@code base} for a usable backend. */
    List<TemplateDescriptor> templates();

    /**
     * The one of {@link #templates()} (or of the images {@link #addImageTemplate} added) with this id, or empty: what a
     * create looks up. The default filters
     * {@link #templates()}; a backend whose listing costs I/O per template answers it for the one id instead.
     */
    default Optional<TemplateDescriptor> template(TemplateId id) {
        return templates().stream().filter(t -> t.id().equals(id)).findFirst();
    }

    /**
     * Makes {@code rootfs}, an unpacked OCI image's root filesystem, a built-in template of this backend named
     * {@code id}: from then on {@link #template(TemplateId)} finds it (it is where template builds start; {@link
     * #templates()} does not list it) and {@link LaunchSource.Template} boots it, with
     * the guest agent running whatever the image holds (any libc, no shell). The directory is read-only from now on
     * and the caller keeps it for as long as the template exists. Adding the same id for the same rootfs and
     * preparation again is a no-op; for another, the template then boots that one. The default refuses: a backend
     * that cannot boot images.
     *
     * @param preparation a POSIX shell script (busybox applets at least) the template's boot runs as root inside the
     *                    image, once, before the guest agent starts: what it changes (accounts, directories) is part
     *                    of the template, and the agent's boot sees it; a non-zero exit fails the boot. Empty: none.
     */
    default TemplateDescriptor addImageTemplate(TemplateId id, Path rootfs, String preparation)
            throws BackendException {
        throw new BackendException.Terminal("this backend cannot start sandboxes from images");
    }

    /**
     * Sets a ready instance of built-in {@code template} aside for one create and returns its reservation, whose id the
     * create then uses ({@link Reservation}); empty when none is ready or the backend keeps none (the default). A
     * backend that makes instances ahead of time names each after a sandbox id of its own and can initialise its guest
     * agent for that id then (its token from {@link BackendContext#envdTokens()}), so the create's start does less.
     * The caller closes the reservation once its launch is over, whatever the outcome. Must not block on I/O.
     */
    default Optional<Reservation> reserve(TemplateId template) {
        return Optional.empty();
    }

    /**
     * {@link #reserve(TemplateId)} for a create from the snapshot {@code id} of the catalog ({@code state} is its
     * state): a backend that keeps restores of snapshots ready (for template builds' results, whose sandboxes should
     * start as fast as a built-in template's) sets one aside; the prepare of a {@link LaunchSource.Snapshot} launch of
     * the reserved id takes it. {@code envVars}, {@code defaultUser} and {@code defaultWorkdir} are what the snapshot's
     * sandboxes get when a create asks for nothing more (its {@link LaunchSpec} then holds exactly these): a backend may
     * initialise its ready instances with them. Empty when none is ready or the backend keeps none (the default). Must
     * not block on I/O.
     */
    default Optional<Reservation> reserve(
            TemplateId id,
            SnapshotState state,
            Map<String, String> envVars,
            String defaultUser,
            Optional<String> defaultWorkdir) {
        return Optional.empty();
    }

    /**
     * The catalog deleted the snapshot {@code id}: a backend that keeps restores of it ready destroys them. The
     * default does nothing.
     */
    default void snapshotDeleted(TemplateId id) {}

    /**
     * Builds (but does not start) an instance for {@code spec}. A backend that can share memory between children of
     * one snapshot does so here when several {@link LaunchSource.Snapshot} launches name the same state. A
     * {@link LaunchSource.Template} launch whose id was {@link #reserve reserved} takes the reserved instance. Nothing runs
     * and nothing needs closing when this throws.
     */
    SandboxBackend prepare(LaunchSpec spec, LaunchSource source) throws BackendException;

    /**
     * Called when a paused sandbox is killed, before its record and artifacts are deleted: releases whatever the backend
     * still holds for it after its pause (the container backend finishes its pause's release here, retrying a failed
     * one). A failure keeps the sandbox paused (the kill is refused and can be retried). After a restart the backend
     * may know nothing of the sandbox: it holds nothing of it then. The default does nothing.
     */
    default void discardPaused(SandboxId id) throws BackendException {}

    /** Re-creates a paused state from {@link PausedState#encode()} after a restart; artifacts are under artifactDir. */
    PausedState decodePausedState(byte[] encoded, Path artifactDir) throws BackendException;

    /** Re-creates a snapshot state from {@link SnapshotState#encode()}; artifacts are under artifactDir. */
    SnapshotState decodeSnapshotState(byte[] encoded, Path artifactDir) throws BackendException;

    /**
     * After a server restart: returns a handle to a sandbox that kept running (for example a container that outlived
     * the server), or empty when it is gone; an empty answer makes the orchestrator reconcile the record. The default
     * is "nothing survives a restart".
     */
    default Optional<SandboxBackend> reattach(LaunchSpec spec) throws BackendException {
        return Optional.empty();
    }
}
