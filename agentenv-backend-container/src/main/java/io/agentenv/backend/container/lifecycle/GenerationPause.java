package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.guest.GuestJournal;
import io.agentenv.backend.container.host.Attempts;
import io.agentenv.backend.container.host.CgroupTree;
import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.ProcessRunner;
import io.agentenv.backend.container.runtime.ContainerState;
import io.agentenv.backend.container.runtime.RuncRuntime;
import io.agentenv.backend.container.storage.GuestFileReads;
import io.agentenv.backend.container.storage.LayerFiles;
import io.agentenv.backend.container.storage.OverlayMounts;
import io.agentenv.backend.container.storage.SandboxDisks;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pauses a running generation into an artifact dir: with memory, a CRIU dump to disk that stops the container; then
 * keeps envd's journal, unmounts the overlay and disk and makes the disk image, layers and images durable in the
 * artifact dir before it answers; the network slot, the dead container's runc state and cgroups and the sandbox dir
 * are released after the answer ({@link DeferredReleases}).
 */
public final class GenerationPause {

    private static final Logger log = LoggerFactory.getLogger(GenerationPause.class);

    private static final Duration SYNC_TIMEOUT = Duration.ofMinutes(2);

    private final CgroupTree cgroups;
    private final RuncRuntime runc;
    private final OverlayMounts overlays;
    private final SandboxDisks disks;
    private final LayerFiles layerFiles;
    private final ContainerNames names;
    private final DeferredReleases deferredReleases;
    private final ProcessRunner runner;
    private final LineageFiles lineageFiles;

    public GenerationPause(
            CgroupTree cgroups,
            RuncRuntime runc,
            OverlayMounts overlays,
            SandboxDisks disks,
            LayerFiles layerFiles,
            ContainerNames names,
            DeferredReleases deferredReleases,
            ProcessRunner runner,
            LineageFiles lineageFiles) {
        this.cgroups = requireNonNull(cgroups, "cgroups is null");
        this.runc = requireNonNull(runc, "runc is null");
        this.overlays = requireNonNull(overlays, "overlays is null");
        this.disks = requireNonNull(disks, "disks is null");
        this.layerFiles = requireNonNull(layerFiles, "layerFiles is null");
        this.names = requireNonNull(names, "names is null");
        this.deferredReleases = requireNonNull(deferredReleases, "deferredReleases is null");
        this.runner = requireNonNull(runner, "runner is null");
        this.lineageFiles = requireNonNull(lineageFiles, "lineageFiles is null");
    }

    PausedState pause(Generation gen, PauseMode mode, Path artifactDir) throws BackendException {
        requireNonNull(mode, "mode is null");
        var dirs = gen.dirs;
        var id = gen.id;
        if (!gen.phase.compareAndSet(ContainerSandbox.Phase.RUNNING, ContainerSandbox.Phase.PAUSING)) {
            throw new BackendException.Recoverable("sandbox " + gen.spec.id() + " is not running: " + gen.phase.get());
        }
        // in a cluster, the template's files the state is made on go to the shared storage first (once per tree), while
        // the sandbox still runs; a storage that refuses them leaves a state that resumes on this machine only
        Map<String, String> files = lineageFiles.keys(gen.lineage());
        try {
            lineageFiles.publish(files);
        } catch (IOException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", gen.spec.id().value())
                    .setCause(e)
                    .log("the shared storage did not take this sandbox's template files; it resumes on this machine"
                            + " only");
        }
        SavedStates.Paused paused = new SavedStates.Paused(
                mode,
                gen.lineage(),
                gen.resources,
                artifactDir,
                mode == PauseMode.WITH_MEMORY ? gen.bootId() : Optional.empty(), // without memory: a new boot at resume
                SavedStates.volumePaths(gen.spec.volumeMounts()),
                files);
        Path work = dirs.dir().resolve("dump-work");
        long started = System.nanoTime();
        long checkpointed;
        try {
            if (mode == PauseMode.WITH_MEMORY) {
                checkpointToDisk(gen, paused.images(), work);
            } else if (gen.frozen()) {
                cgroups.thaw(id);
                gen.frozen(false);
            }
        } catch (IOException | CommandFailedException e) {
            return failedPause(gen, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while pausing sandbox " + gen.spec.id(), e);
        }
        checkpointed = System.nanoTime();
        gen.closeClient();
        // The checkpoint is written and (with memory) the processes are gone. First envd's journal is copied out of the
        // sandbox's files (its logs while paused). What the pause must finish before it answers is what makes its state
        // complete and durable: unmount the overlay and the sandbox's disk (which flushes the disk into its image),
        // move
        // the disk image and layers into the artifact dir, syncfs. The rest frees what no paused state needs (the slot:
        // its nft chain and netns; runc's state and the dead container's cgroups; the sandbox dir and warm-pool claim)
        // and runs after the answer (DeferredReleases): a resume of this sandbox waits for it, shutdown too, and after
        // a
        // crash the start-up reconciler removes what is left. A filesystem-only pause stops the container first.
        boolean dumped = mode == PauseMode.WITH_MEMORY;
        long[] took = new long[5]; // journal, container (filesystem-only pause), unmount, move, sync: ms each
        long[] journalKept = {-1}; // bytes
        long[] diskReleaseWait = {-1}; // ms the disk's filesystem lived on after its unmount (a copy elsewhere)
        if (dumped) {
            long keeping = System.nanoTime();
            journalKept[0] = keepJournal(gen, paused);
            took[0] = (System.nanoTime() - keeping) / 1_000_000;
        }
        List<Exception> failures = new ArrayList<>();
        try {
            Attempts.attempt(failures, () -> {
                if (!dumped) {
                    took[1] = Attempts.timed(() -> runc.delete(id));
                    took[0] = Attempts.timed(() -> journalKept[0] = keepJournal(gen, paused));
                }
                took[2] = Attempts.timed(() -> {
                    overlays.unmount(dirs.rootfs());
                    diskReleaseWait[0] = disks.unmount(dirs); // returns once the disk is written clean
                });
                took[3] = Attempts.timed(() -> {
                    disks.moveImage(dirs.diskImage(), paused.diskImage());
                    if (Files.isDirectory(dirs.layers())) {
                        layerFiles.move(dirs.layers(), paused.layers());
                    }
                });
                took[4] = Attempts.timed(() -> syncFilesystem(artifactDir));
            });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while pausing sandbox " + gen.spec.id(), e);
        }
        if (!failures.isEmpty()) { // close() releases what is left
            gen.phase.set(ContainerSandbox.Phase.CLOSED);
            throw gen.notReleased("stopped but its state was not kept", failures);
        }
        gen.phase.set(ContainerSandbox.Phase.PAUSED);
        long done = System.nanoTime();
        releaseAfterAnswer(gen, dumped);
        log.atInfo()
                .addKeyValue("sandbox_id", gen.spec.id().value())
                .addKeyValue("mode", mode)
                .addKeyValue("checkpoint_ms", (checkpointed - started) / 1_000_000)
                .addKeyValue("release_ms", (done - checkpointed) / 1_000_000)
                .addKeyValue("journal_ms", took[0])
                .addKeyValue("journal_bytes", journalKept[0])
                .addKeyValue("container_ms", took[1])
                .addKeyValue("unmount_ms", took[2])
                .addKeyValue("disk_release_wait_ms", diskReleaseWait[0])
                .addKeyValue("move_ms", took[3])
                .addKeyValue("sync_ms", took[4])
                .log("container sandbox paused");
        return paused;
    }

    /**
     * Starts what is left to release after the pause answers: the slot and (after a memory dump) runc's state and
     * cgroups at once, then the sandbox dir (empty of state by now) and the warm-pool claim. Logged when done.
     */
    private void releaseAfterAnswer(Generation gen, boolean dumped) {
        var id = gen.id;
        long started = System.nanoTime();
        long[] took = new long[3]; // slot, container, remove: ms each
        List<Attempts.Step> atOnce = new ArrayList<>();
        atOnce.add(() -> took[0] = Attempts.timed(gen::retireSlot));
        if (dumped) {
            atOnce.add(() -> took[1] = Attempts.timed(() -> runc.delete(id)));
        }
        deferredReleases.start(
                gen.spec.id(),
                atOnce,
                List.of(
                        () -> took[2] = Attempts.timed(() -> {
                            FileTrees.deleteTree(gen.dirs.dir());
                            names.unclaim(gen.spec.id()); // a resume restores into the sandbox's own container id
                        }),
                        () -> log.atInfo()
                                .addKeyValue("sandbox_id", gen.spec.id().value())
                                .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                                .addKeyValue("slot_ms", took[0])
                                .addKeyValue("container_ms", took[1])
                                .addKeyValue("remove_ms", took[2])
                                .log("paused container sandbox released")));
    }

    /**
     * Freezes the sandbox here, then lets CRIU dump and kill it. CRIU freezing a cgroup v1 itself re-reads the freezer
     * state every 100 ms, so its freeze costs a fixed 100 ms although the kernel freezes envd in ~2 ms; a cgroup that
     * is FROZEN already is dumped as it is. CRIU runs directly ({@link RuncRuntime#dump}), not through runc. After a
     * successful dump CRIU kills the tasks and thaws the cgroup; {@code runc delete} in the release removes runc's
     * state and the cgroups. After a failed one CRIU freezes the cgroup again, and this thaws it: the sandbox runs
     * on, as before the pause.
     */
    private void checkpointToDisk(Generation gen, Path images, Path work)
            throws IOException, CommandFailedException, InterruptedException {
        if (!gen.frozen()) {
            cgroups.freeze(gen.id); // undone by freeze itself when the kernel cannot complete it
            gen.frozen(true);
        }
        try {
            runc.dump(gen.id, images, work, RuncRuntime.AfterCheckpoint.STOP);
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
    private long keepJournal(Generation gen, SavedStates.Paused paused) {
        try {
            List<Path> layers = new ArrayList<>();
            layers.add(gen.dirs.upper());
            layers.addAll(gen.lineage().lowers(gen.dirs.layers()));
            Optional<Long> kept = GuestJournal.keep(layers, paused.guestJournal());
            if (kept.isEmpty()) {
                log.atWarn()
                        .addKeyValue("sandbox_id", gen.spec.id().value())
                        .log("no journal file of envd in the sandbox; its logs are not kept at pause");
            }
            return kept.orElse(-1L);
        } catch (IOException | RuntimeException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", gen.spec.id().value())
                    .setCause(e)
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
        runner.run(Command.of(SYNC_TIMEOUT, "sync", "--file-system", dir.toString()));
    }

    /** A checkpoint that failed: Recoverable when the container still runs (CRIU resumes it), else Terminal. */
    private PausedState failedPause(Generation gen, Exception e) throws BackendException {
        boolean running;
        try {
            running = runc.state(gen.id)
                    .map(s -> s.status() == ContainerState.Status.RUNNING)
                    .orElse(false);
        } catch (CommandFailedException stateFailed) {
            running = false;
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            running = false;
        }
        if (running && gen.phase.compareAndSet(ContainerSandbox.Phase.PAUSING, ContainerSandbox.Phase.RUNNING)) {
            throw new BackendException.Recoverable(
                    "pause of sandbox " + gen.spec.id() + " failed, still running: " + e.getMessage(), e);
        }
        throw new BackendException.Terminal("pause of sandbox " + gen.spec.id() + " failed: " + e.getMessage(), e);
    }
}
