package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.CgroupTree;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.runtime.RuncRuntime;
import io.agentenv.backend.container.storage.LayerCapture;
import io.agentenv.backend.container.storage.LayerFiles;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.SnapshotState;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The in-place freeze (cgroup freezer) of a running generation and the snapshot it takes while frozen: memory and
 * filesystem as an immutable layer set, the container running on afterwards.
 */
public final class GenerationCapture {

    private static final Logger log = LoggerFactory.getLogger(GenerationCapture.class);

    private final CgroupTree cgroups;
    private final RuncRuntime runc;
    private final LayerCapture layerCapture;
    private final LayerFiles layerFiles;
    private final LineageFiles lineageFiles;

    public GenerationCapture(
            CgroupTree cgroups,
            RuncRuntime runc,
            LayerCapture layerCapture,
            LayerFiles layerFiles,
            LineageFiles lineageFiles) {
        this.cgroups = requireNonNull(cgroups, "cgroups is null");
        this.runc = requireNonNull(runc, "runc is null");
        this.layerCapture = requireNonNull(layerCapture, "layerCapture is null");
        this.layerFiles = requireNonNull(layerFiles, "layerFiles is null");
        this.lineageFiles = requireNonNull(lineageFiles, "lineageFiles is null");
    }

    void freeze(Generation gen) throws BackendException {
        gen.requireRunning("freeze");
        try {
            cgroups.freeze(gen.id);
            gen.frozen(true);
        } catch (IOException e) {
            throw new BackendException.Recoverable(
                    "freeze of sandbox " + gen.spec.id() + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Recoverable("interrupted while freezing sandbox " + gen.spec.id(), e);
        }
    }

    void thaw(Generation gen) throws BackendException {
        gen.requireRunning("thaw");
        try {
            cgroups.thaw(gen.id);
            gen.frozen(false);
        } catch (IOException e) {
            throw new BackendException.Terminal("thaw of sandbox " + gen.spec.id() + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while thawing sandbox " + gen.spec.id(), e);
        }
    }

    /**
     * Freezes (unless frozen already), copies the upper dir as layer 0 and hard-links the owned layers below it into
     * the artifact dir, checkpoints memory with leave-running (CRIU directly, {@link RuncRuntime#dump}), and thaws.
     */
    SnapshotState snapshot(Generation gen, Path artifactDir) throws BackendException {
        gen.requireRunning("snapshot");
        Lineage current = gen.lineage();
        // in a cluster a snapshot starts on any node: the template's files it is made on go to the shared storage
        // first (once per tree); a snapshot other nodes could not start is not taken
        Map<String, String> files = lineageFiles.keys(current);
        try {
            lineageFiles.publish(files);
        } catch (IOException e) {
            throw new BackendException.Recoverable(
                    "snapshot of sandbox " + gen.spec.id() + " failed: the shared storage did not take its template's"
                            + " files: " + e.getMessage(),
                    e);
        }
        SavedStates.Snapshot snapshot = new SavedStates.Snapshot(
                current.withCapturedUpper(),
                gen.resources,
                Optional.of(gen.spec.accessToken()),
                artifactDir,
                gen.bootId(),
                SavedStates.volumePaths(gen.spec.volumeMounts()),
                files);
        boolean wasFrozen = gen.frozen();
        long started = System.nanoTime();
        Path work = gen.dirs.dir().resolve("snapshot-work");
        try {
            if (!wasFrozen) {
                cgroups.freeze(gen.id);
            }
            layerCapture.capture(gen.dirs.upper(), snapshot.layers().resolve("0"));
            layerFiles.copyLayers(gen.dirs.layers(), snapshot.layers(), current.renumbered());
            runc.dump(gen.id, snapshot.images(), work, RuncRuntime.AfterCheckpoint.LEAVE_RUNNING);
        } catch (IOException | CommandFailedException e) {
            thawAfterSnapshot(gen, wasFrozen);
            discard(gen, snapshot.layers(), snapshot.images(), work);
            throw new BackendException.Recoverable(
                    "snapshot of sandbox " + gen.spec.id() + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            thawAfterSnapshot(gen, wasFrozen);
            throw new BackendException.Recoverable("interrupted while capturing sandbox " + gen.spec.id(), e);
        }
        thawAfterSnapshot(gen, wasFrozen);
        discard(gen, work);
        log.atInfo()
                .addKeyValue("sandbox_id", gen.spec.id().value())
                .addKeyValue("layers", snapshot.lineage().layers().size())
                .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                .log("container sandbox captured");
        return snapshot;
    }

    private void thawAfterSnapshot(Generation gen, boolean wasFrozen) throws BackendException {
        if (wasFrozen) {
            return;
        }
        try {
            cgroups.thaw(gen.id);
        } catch (IOException e) {
            throw new BackendException.Terminal(
                    "sandbox " + gen.spec.id() + " stays frozen after a capture: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while thawing sandbox " + gen.spec.id(), e);
        }
    }

    private void discard(Generation gen, Path... paths) {
        for (Path path : paths) {
            try {
                FileTrees.deleteTree(path);
            } catch (IOException e) {
                log.atWarn()
                        .addKeyValue("sandbox_id", gen.spec.id().value())
                        .addKeyValue("path", path)
                        .setCause(e)
                        .log("could not remove a partial capture");
            }
        }
    }
}
