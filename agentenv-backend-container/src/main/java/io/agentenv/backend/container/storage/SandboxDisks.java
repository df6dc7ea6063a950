package io.agentenv.backend.container.storage;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.MountTable;
import io.agentenv.backend.container.host.ProcessRunner;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Each sandbox's own disk: a sparse ext4 image file ({@link SandboxDirs#diskImage()}) of the sandbox's disk size,
 * loop-mounted at {@link SandboxDirs#disk()}, which holds the overlay's upper and work dirs. Writing past the size
 * fails inside the sandbox with ENOSPC, {@code df /} and {@code statfs} show the size (overlayfs reports its upper's
 * filesystem), deleting files frees space (mounted with {@code discard}, so the host file shrinks too), and the limit
 * travels with the file: a pause moves it (a rename), a resume mounts it again.
 *
 * <p>Why not one shared filesystem with project quotas: this host's kernel has neither XFS quota support
 * ({@code CONFIG_XFS_QUOTA}) nor the quota formats ext4 needs ({@code CONFIG_QFMT_V2}), and btrfs qgroups answer
 * EDQUOT and leave {@code df} unchanged. See docs/host-setup.md ("Sandbox disks").
 *
 * <p>The image has no journal (a sandbox's running state does not survive a host crash anyway, and a paused one was
 * unmounted cleanly), reserves no blocks for root, and its inode tables are never zeroed (the kernel knows unused
 * ones from the group descriptors), so a fresh image takes ~4 MiB of host disk whatever its size. It is mounted through
 * a loop device of its own that clears itself on unmount ({@link Mounts#loopExt4}, as {@code mount -o loop} does), so
 * unmounting releases it.
 */
public final class SandboxDisks {

    /** Smallest disk (E2B: diskSizeMB is at least 1024 and a multiple of 1024). */
    static final int MIN_MIB = 1024;
    /** Largest disk: 1 TiB (sparse, but the sandbox may fill it). */
    static final int MAX_MIB = 1 << 20;

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String MOUNT_OPTIONS = "noinit_itable,discard";
    /**
     * How long an unmounted disk's filesystem may stay alive after no process is seen holding a copy of its mount
     * ({@link LoopBinding}).
     */
    public static final Duration RELEASE_TIMEOUT = Duration.ofSeconds(10);
    /**
     * How long at most while processes hold a copy: longer than a CRIU restore's deadline ({@code criu_timeout_s},
     * 120 s by default), the longest holder seen (another sandbox's restore).
     */
    static final Duration RELEASE_TIMEOUT_WHILE_HELD = Duration.ofSeconds(150);

    private static final LoopBinding.Bounds RELEASE =
            new LoopBinding.Bounds(RELEASE_TIMEOUT, RELEASE_TIMEOUT_WHILE_HELD);

    private final ProcessRunner runner;
    private final SpareDisks spares;

    /**
     * @param spares where new disks come from when one is ready ({@link SpareDisks}); made here otherwise
     */
    public SandboxDisks(ProcessRunner runner, SpareDisks spares) {
        this.runner = requireNonNull(runner, "runner is null");
        this.spares = requireNonNull(spares, "spares is null");
    }

    /** The spare images this host keeps ready. */
    public SpareDisks spares() {
        return spares;
    }

    /**
     * Makes an empty image file of {@code sizeMiB} at {@code image}: a sparse file (no block written) formatted as
     * ext4. {@code background} runs {@code mkfs.ext4} under {@code nice}, for images made ahead of need.
     */
    public static void format(ProcessRunner runner, Path image, int sizeMiB, boolean background)
            throws IOException, CommandFailedException, InterruptedException {
        checkSize(sizeMiB);
        Files.deleteIfExists(image);
        try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
            file.setLength((long) sizeMiB << 20); // sparse: no block is written
        }
        List<String> mkfs = List.of(
                "mkfs.ext4",
                "-q",
                "-F",
                "-m",
                "0",
                "-O",
                "^has_journal",
                "-E",
                "lazy_itable_init=1,nodiscard",
                "-L",
                "aenv-disk",
                image.toString());
        List<String> command = new ArrayList<>();
        if (background) {
            command.addAll(List.of("nice", "-n", "10"));
        }
        command.addAll(mkfs);
        try {
            runner.run(Command.of(TIMEOUT, command.toArray(String[]::new)));
        } catch (CommandFailedException | InterruptedException | RuntimeException e) {
            Files.deleteIfExists(image);
            throw e;
        }
    }

    /**
     * Why sandbox disks cannot be made on this host, or empty when they can: loop devices ({@code /dev/loop-control})
     * and {@code mkfs.ext4} (e2fsprogs) are needed; scripts/setup-host.sh checks both with a trial disk.
     */
    public static Optional<String> unavailableReason() {
        if (!Files.exists(Path.of("/dev/loop-control"))) {
            return Optional.of("no loop device support (/dev/loop-control is missing; CONFIG_BLK_DEV_LOOP)");
        }
        for (String dir : List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin")) {
            if (Files.isExecutable(Path.of(dir, "mkfs.ext4"))) {
                return Optional.empty();
            }
        }
        return Optional.of("mkfs.ext4 is not installed (Debian package e2fsprogs)");
    }

    /** Checks a disk size in MiB: at least 1024, a multiple of 1024, at most 1 TiB. */
    public static int checkSize(int sizeMiB) {
        if (sizeMiB < MIN_MIB || sizeMiB > MAX_MIB || sizeMiB % MIN_MIB != 0) {
            throw new IllegalArgumentException("a sandbox disk must be a multiple of 1024 MiB from " + MIN_MIB + " to "
                    + MAX_MIB + ": " + sizeMiB);
        }
        return sizeMiB;
    }

    /**
     * Gives the sandbox a new empty disk of {@code sizeMiB} (a spare image when one is ready, else one made now) and
     * mounts it, with empty upper and work dirs. Any disk the sandbox dir held before is unmounted and replaced.
     *
     * @return true when the disk was a spare image
     */
    public boolean create(SandboxDirs dirs, int sizeMiB)
            throws IOException, CommandFailedException, InterruptedException {
        checkSize(sizeMiB);
        unmount(dirs);
        Path image = dirs.diskImage();
        Files.createDirectories(dirs.dir());
        Files.deleteIfExists(image);
        boolean spare = spares.take(sizeMiB, image);
        if (!spare) {
            format(runner, image, sizeMiB, false);
        }
        try {
            Files.createDirectories(dirs.disk());
            Mounts.loopExt4(image, dirs.disk(), MOUNT_OPTIONS); // a new image: no loop device can be bound to it
            Path root = dirs.disk();
            Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwx------"));
            Files.createDirectories(dirs.upper());
            Files.createDirectories(dirs.work());
            return spare;
        } catch (IOException | RuntimeException e) {
            try {
                unmount(dirs);
                Files.deleteIfExists(image);
            } catch (IOException | RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    /** Mounts the sandbox's existing disk image (after a resume moved it back); nothing to do when mounted. */
    public void mount(SandboxDirs dirs) throws IOException, CommandFailedException, InterruptedException {
        mount(dirs, RELEASE);
    }

    /**
     * {@link #mount(SandboxDirs)} with another bound on the wait for a previous loop device of the image to let go
     * (tests).
     */
    public static void mount(SandboxDirs dirs, LoopBinding.Bounds releaseBounds) throws IOException {
        Path image = dirs.diskImage();
        if (!Files.isRegularFile(image, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException("no disk image at " + image);
        }
        if (MountTable.isMountPoint(dirs.disk())) {
            return;
        }
        awaitNoLoopBoundTo(image, releaseBounds);
        Files.createDirectories(dirs.disk());
        Mounts.loopExt4(image, dirs.disk(), MOUNT_OPTIONS);
    }

    /**
     * Waits (within {@code bounds}) until no loop device is bound to {@code image}: mounting an image whose
     * previous filesystem is still alive (a copy of its mount in another mount namespace) through a second loop device
     * would run two ext4 superblocks on one file. The kernel shows a bound file's current path, renames included.
     */
    private static void awaitNoLoopBoundTo(Path image, LoopBinding.Bounds bounds) throws IOException {
        // a device still bound to a removed file shows "<path> (deleted)": another file, not listed here
        for (LoopDevices.Attached bound : LoopDevices.backedUnder(image)) {
            new LoopBinding(bound.device(), bound.backingFile()).awaitReleased(bounds);
        }
    }

    /**
     * Unmounts the sandbox's disk (a system call, no process) and returns once its filesystem is really gone: its loop
     * device has let go of the image (autoclear), which happens only after the superblock was written clean. A copy of
     * the mount in another mount namespace keeps it alive after our unmount ({@link LoopBinding}); this waits while a
     * process holds such a copy (up to {@link #RELEASE_TIMEOUT_WHILE_HELD}) and {@link #RELEASE_TIMEOUT} after the last
     * one went, else fails (the image is then still in use and must not be moved, mounted again or called durable).
     * Nothing to do when the disk is not mounted.
     *
     * @return how long it waited for the filesystem to go after the unmount, in ms (-1 when nothing was mounted)
     */
    public long unmount(SandboxDirs dirs) throws IOException {
        return unmount(dirs, RELEASE);
    }

    /**
     * {@link #unmount(SandboxDirs)} with another bound on the wait for the filesystem to go (tests).
     *
     * @return how long it waited for the filesystem to go after the unmount, in ms (-1 when nothing was mounted)
     */
    public static long unmount(SandboxDirs dirs, LoopBinding.Bounds releaseBounds) throws IOException {
        // read before the unmount; when nothing is mounted there the unmount answers false and this is not used
        Optional<LoopBinding> loop = LoopBinding.mountedAt(dirs.disk());
        if (!Unmounts.unmount(dirs.disk())) {
            return -1;
        }
        return loop.isPresent() ? loop.get().awaitReleased(releaseBounds) : 0;
    }

    /** Whether the sandbox has a disk image (a sandbox dir of an older version has a plain upper dir instead). */
    static boolean hasImage(SandboxDirs dirs) {
        return Files.isRegularFile(dirs.diskImage(), LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * Moves an unmounted disk image (pause: into the artifact dir; resume: back). A rename on one filesystem; across
     * filesystems a sparse copy, then the source is removed.
     */
    public void moveImage(Path from, Path to) throws IOException, CommandFailedException, InterruptedException {
        if (!Files.isRegularFile(from, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException("no disk image at " + from);
        }
        Files.createDirectories(to.getParent());
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException crossDevice) {
            Files.deleteIfExists(to);
            runner.run(
                    Command.of(Duration.ofMinutes(10), "cp", "--sparse=always", "--", from.toString(), to.toString()));
            Files.delete(from);
        }
    }
}
