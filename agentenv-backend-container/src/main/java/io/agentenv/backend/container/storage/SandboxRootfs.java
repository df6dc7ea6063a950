package io.agentenv.backend.container.storage;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.CommandFailedException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/** A sandbox's root filesystem: its overlay on its own disk ({@link SandboxDisks}, {@link OverlayMounts}). */
public final class SandboxRootfs {

    private final SandboxDisks disks;
    private final OverlayMounts overlays;

    public SandboxRootfs(SandboxDisks disks, OverlayMounts overlays) {
        this.disks = requireNonNull(disks, "disks is null");
        this.overlays = requireNonNull(overlays, "overlays is null");
    }

    /**
     * Makes a new disk of {@code sizeMiB} for a sandbox and mounts its overlay over {@code lowers} (topmost first);
     * true when the disk was a spare image ({@link SpareDisks}).
     */
    public boolean mountOnNewDisk(List<Path> lowers, SandboxDirs dirs, int sizeMiB)
            throws IOException, CommandFailedException, InterruptedException {
        boolean spare = disks.create(dirs, sizeMiB);
        overlays.mount(lowers, dirs.upper(), dirs.work(), dirs.rootfs());
        return spare;
    }

    /** Unmounts a sandbox's overlay, then its disk (nothing to do for what is not mounted). */
    public void unmount(SandboxDirs dirs) throws IOException, CommandFailedException, InterruptedException {
        overlays.unmount(dirs.rootfs());
        disks.unmount(dirs);
    }
}
