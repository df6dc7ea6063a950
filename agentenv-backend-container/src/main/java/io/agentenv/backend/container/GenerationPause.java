package io.agentenv.backend.container;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendException;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pauses a running generation into an artifact dir: with memory, a CRIU dump to disk that stops the container; then
 * releases the container, network slot, overlay and disk mount, keeping the disk image and layers in the artifact dir.
 */
final class GenerationPause {

    private static final Logger log = LoggerFactory.getLogger(GenerationPause.class);

    private static final Duration SYNC_TIMEOUT = Duration.ofMinutes(2);

    private final Generation gen;

    GenerationPause(Generation gen) {
        this.gen = requireNonNull(gen, "gen is null");
    }

    PausedState pause(PauseMode mode, Path artifactDir) throws BackendException {
        requireNonNull(mode, "mode is null");
        var parts = gen.parts;
        var dirs = gen.dirs;
        var id = gen.id;
        if (!gen.phase.compareAndSet(ContainerSandbox.Phase.RUNNING, ContainerSandbox.Phase.PAUSING)) {
            throw new BackendException.Recoverable("sandbox " + gen.spec.id() + " is not running: " + gen.phase.get());
        }
        SavedStates.Paused paused = new SavedStates.Paused(mode, gen.lineage(), gen.resources, artifactDir);
        Path work = dirs.dir().resolve("dump-work");
        long started = System.nanoTime();
        long checkpointed;
        try {
            if (mode == PauseMode.WITH_MEMORY) {
                checkpointToDisk(paused.images(), work);
            } else if (gen.frozen()) {
                parts.cgroups().thaw(id);
                gen.frozen(false);
            }
        } catch (IOException | CommandFailedException e) {
            return failedPause(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while pausing sandbox " + gen.spec.id(), e);
        }
        checkpointed = System.nanoTime();
        gen.closeClient();
        // The checkpoint is written. First envd's journal is copied out of the sandbox's files (its logs while paused),
        // then what is left is releasing, in independent parts that run at once: the container
        // (after a memory dump its processes are gone: runc's state and the cgroups), the network slot (its nft chain
        // and netns; the kernel's removal of its veth pair finishes after the return) and the files (unmount the overlay
        // and the sandbox's disk, move the disk image and layers into the artifact dir, then make that durable while
        // the sandbox dir is removed). Pause returns once all are done. A filesystem-only pause stops the container
        // before its files move.
        boolean dumped = mode == PauseMode.WITH_MEMORY;
        List<FutureTask<Void>> releases = new ArrayList<>();
        long[] took = new long[7]; // slot, container, unmount, move, sync, remove, journal: ms each
        long[] journalKept = {-1}; // bytes
        if (dumped) { // its processes are gone; a filesystem-only pause keeps it once the container is deleted, below
            long keeping = System.nanoTime();
            journalKept[0] = keepJournal(paused);
            took[6] = (System.nanoTime() - keeping) / 1_000_000;
        }
        releases.add(inBackground("pause-slot-" + id.value(), () -> took[0] = timed(gen::retireSlot)));
        if (dumped) {
            releases.add(inBackground("pause-container-" + id.value(), () -> took[1] = timed(() -> parts.runc().delete(id))));
        }
        List<Exception> failures = new ArrayList<>();
        try {
            Attempts.attempt(failures, () -> {
                if (!dumped) {
                    took[1] = timed(() -> parts.runc().delete(id));
                    took[6] = timed(() -> journalKept[0] = keepJournal(paused));
                }
                took[2] = timed(() -> parts.unmountRootfs(dirs));
                took[3] = timed(() -> {
                    parts.disks().moveImage(dirs.diskImage(), paused.diskImage());
                    if (Files.isDirectory(HostParts.layersDir(dirs))) {
                        parts.move(HostParts.layersDir(dirs), paused.layers());
                    }
                });
            });
            releases.add(inBackground("pause-sync-" + id.value(), () -> took[4] = timed(() -> syncFilesystem(artifactDir))));
            if (failures.isEmpty()) { // never after a failed unmount or move: the dir may still hold the upper
                Attempts.attempt(failures, () -> took[5] = timed(() -> {
                    parts.deleteTree(dirs.dir());
                    parts.unclaim(gen.spec.id()); // a resume restores into the sandbox's own container id
                }));
            }
            for (FutureTask<Void> release : releases) {
                Attempts.attempt(failures, () -> awaitRelease(release));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while pausing sandbox " + gen.spec.id(), e);
        }
        if (!failures.isEmpty()) {
            gen.phase.set(ContainerSandbox.Phase.CLOSED);
            throw gen.notReleased("stopped but was not fully released", failures);
        }
        gen.phase.set(ContainerSandbox.Phase.PAUSED);
        long done = System.nanoTime();
        log.atInfo().addKeyValue("sandbox_id", gen.spec.id().value()).addKeyValue("mode", mode)
                .addKeyValue("checkpoint_ms", (checkpointed - started) / 1_000_000)
                .addKeyValue("release_ms", (done - checkpointed) / 1_000_000)
                .addKeyValue("slot_ms", took[0]).addKeyValue("container_ms", took[1]).addKeyValue("unmount_ms", took[2])
                .addKeyValue("move_ms", took[3]).addKeyValue("sync_ms", took[4]).addKeyValue("remove_ms", took[5])
                .addKeyValue("journal_ms", took[6]).addKeyValue("journal_bytes", journalKept[0]).log("container sandbox paused");
        return paused;
    }

    /**
     * Freezes the sandbox here, then lets CRIU dump and kill it. CRIU freezing a cgroup v1 itself re-reads the freezer
     * state every 100 ms, so its freeze costs a fixed 100 ms although the kernel freezes envd in ~2 ms; a cgroup that
     * is FROZEN already is dumped as it is. CRIU runs directly ({@link RuncRuntime#dump}), not through runc. After a
     * successful dump CRIU kills the tasks and thaws the cgroup; {@code runc delete} in the release removes runc's
     * state and the cgroups. After a failed one CRIU freezes the cgroup again, and this thaws it: the sandbox runs
     * on, as before the pause.
     */
    private void checkpointToDisk(Path images, Path work) throws IOException, CommandFailedException, InterruptedException {
        var cgroups = gen.parts.cgroups();
        if (!gen.frozen()) {
            cgroups.freeze(gen.id); // undone by freeze itself when the kernel cannot complete it
            gen.frozen(true);
        }
        try {
            gen.parts.runc().dump(gen.id, images, work, RuncRuntime.AfterCheckpoint.STOP);
        } catch (IOException | CommandFailedException e) {
            try {
                cgroups.thaw(gen.id);
                gen.frozen(false);
            } catch (IOException thawFailed) {
                e.addSuppressed(thawFailed);
            }
            throw e;
        }
        cgroups.thawIfFrozen(gen.id.value()); // runc has usually removed the cgroup by now
        gen.frozen(false);
    }

    /**
     * Copies envd's journal file out of the sandbox's layers into the artifact dir ({@link GuestJournal}), where the
     * sync below makes it durable: once the sandbox's processes are gone (so nothing changes the tree while it is
     * read), from the upper dir on its still mounted disk and the lower dirs, before the release starts processes
     * alongside (see {@link GuestFileReads} for why that matters). The logs are best effort: a journal that cannot be kept is logged and
     * the pause goes on (reading that paused sandbox's logs is then a conflict). Returns the bytes kept, -1 for none.
     */
    private long keepJournal(SavedStates.Paused paused) {
        try {
            List<Path> layers = new ArrayList<>();
            layers.add(gen.dirs.upper());
            layers.addAll(gen.lineage().lowers(HostParts.layersDir(gen.dirs)));
            Optional<Long> kept = GuestJournal.keep(layers, paused.guestJournal());
            if (kept.isEmpty()) {
                log.atWarn().addKeyValue("sandbox_id", gen.spec.id().value())
                        .log("no journal file of envd in the sandbox; its logs are not kept at pause");
            }
            return kept.orElse(-1L);
        } catch (IOException | RuntimeException e) {
            log.atWarn().addKeyValue("sandbox_id", gen.spec.id().value()).setCause(e)
                    .log("envd's journal could not be kept at pause");
            return -1;
        }
    }

    /**
     * Makes the artifact dir durable before pause returns: the images CRIU wrote (it never syncs them) and the disk
     * image and layers just renamed into it. One syncfs of the filesystem holding them; CRIU has already started
     * writing the pages out (criu-patches/0004), and the disk's unmount flushed it (a flush of a loop device fsyncs
     * its image file), so little is left.
     */
    private void syncFilesystem(Path dir) throws CommandFailedException, InterruptedException {
        gen.parts.runner().run(Command.of(SYNC_TIMEOUT, "sync", "--file-system", dir.toString()));
    }

    /** Runs a step and returns how long it took, in ms. */
    private static long timed(Attempts.Step step) throws Exception {
        long started = System.nanoTime();
        step.run();
        return (System.nanoTime() - started) / 1_000_000;
    }

    /** Runs one release step on its own virtual thread. */
    private static FutureTask<Void> inBackground(String name, Attempts.Step step) {
        FutureTask<Void> task = new FutureTask<>(() -> {
            step.run();
            return null;
        });
        Thread.ofVirtual().name(name).start(task);
        return task;
    }

    /** Waits for a release step and rethrows how it failed. */
    private static void awaitRelease(FutureTask<Void> release) throws Exception {
        try {
            release.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        }
    }

    /** A checkpoint that failed: Recoverable when the container still runs (CRIU resumes it), else Terminal. */
    private PausedState failedPause(Exception e) throws BackendException {
        boolean running;
        try {
            running = gen.parts.runc().state(gen.id).map(s -> s.status() == ContainerState.Status.RUNNING).orElse(false);
        } catch (CommandFailedException stateFailed) {
            running = false;
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            running = false;
        }
        if (running && gen.phase.compareAndSet(ContainerSandbox.Phase.PAUSING, ContainerSandbox.Phase.RUNNING)) {
            throw new BackendException.Recoverable("pause of sandbox " + gen.spec.id() + " failed, still running: "
                    + e.getMessage(), e);
        }
        throw new BackendException.Terminal("pause of sandbox " + gen.spec.id() + " failed: " + e.getMessage(), e);
    }
}
