package io.agentenv.backend.container.storage;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * A loop device bound to an image file, as {@code /sys/dev/block/MAJ:MIN/loop/backing_file} shows it, and the wait
 * until it lets go of that file.
 *
 * <p>Why the wait: unmounting a loop-mounted disk in the server's mount namespace removes only that namespace's mount.
 * When another mount namespace holds a copy of it (any {@code CLONE_NEWNS} made meanwhile copies the whole mount table:
 * runc init and CRIU restore for another sandbox, before they drop the host's tree, or any other process), the ext4
 * superblock stays alive: not yet written clean, its loop device still bound (autoclear runs only once the superblock
 * is gone). The same holds for a copy of the sandbox's overlay, which keeps a private clone of the disk mount as its
 * upper layer. Once the device is detached (or bound to another file), the superblock was put, the filesystem written
 * clean and flushed into the image's pages. Reproduced and checked by LoopReleaseHostTest.
 *
 * <p>How long a copy can live: CRIU restoring another sandbox ({@code runc restore}, also another server's or test
 * run's) copies the host's whole mount table into its "root yard" namespace when the restore begins and holds that
 * namespace open (a descriptor; no process is in it) until the restore ends. On a quiet host that is ~150 ms; with
 * several host test runs and benchmarks at once on 2 cores (load 12-17) restores took 10-23 s, and an unmount made
 * meanwhile kept its loop device bound that long. So the wait follows its holders ({@link #awaitReleased}).
 *
 * @param device the device's name ({@code loop3})
 * @param backingFile the backing file as the kernel printed it when this was read
 */
public record LoopBinding(String device, String backingFile) {

    private static final int LOOP_MAJOR = 7;
    private static final long LONGEST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    private static final long SCAN_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final Path PROC = Path.of("/proc");
    /** The command name of LXCFS's daemon (see {@link #holders}). */
    private static final String LXCFS = "lxcfs";

    public LoopBinding {
        requireNonNull(device, "device is null");
        requireNonNull(backingFile, "backingFile is null");
        LoopDevices.requireLoopName(device);
    }

    /**
     * The loop device of the filesystem mounted at {@code mountPoint}, or empty when that filesystem is not on a bound
     * loop device (nothing mounted there, or another kind of filesystem). One {@code stat} and one sysfs read.
     */
    static Optional<LoopBinding> mountedAt(Path mountPoint) throws IOException {
        long dev;
        try {
            dev = (Long) Files.getAttribute(mountPoint, "unix:dev");
        } catch (NoSuchFileException gone) {
            return Optional.empty();
        }
        long major = ((dev >>> 8) & 0xfffL) | ((dev >>> 32) & ~0xfffL);
        long minor = (dev & 0xffL) | ((dev >>> 12) & ~0xffL);
        if (major != LOOP_MAJOR) {
            return Optional.empty();
        }
        String device; // loopN's minor is N only without partitions (max_part=0): ask sysfs for the name
        try {
            device = Files.readSymbolicLink(Path.of("/sys/dev/block", major + ":" + minor))
                    .getFileName()
                    .toString();
        } catch (NoSuchFileException gone) {
            return Optional.empty();
        }
        return LoopDevices.backingFileOf(device).map(file -> new LoopBinding(device, file));
    }

    /**
     * The processes (up to 8) that may keep the filesystem alive: one in each mount namespace whose table names the
     * device or a path in the image's dir (a copy of the overlay on the disk holds it too), as "pid comm", and those
     * holding a mount namespace open that no process is in, as "pid comm (mount namespace mnt:[N] held open as fd F)":
     * CRIU restoring another sandbox keeps its "root yard" namespace, a copy of the host's whole mount table made when
     * the restore began, open that way until the restore ends, which under load takes many seconds. Such a namespace's
     * table cannot be read from here; a lazily detached copy kept busy shows in neither. The host's LXCFS daemon is
     * left out: it holds the namespace of its cgroup mounts open for its lifetime, but pivots into a tmpfs there and
     * detaches the host's tree when it starts, so it holds no copy of any disk (measured: an image loop-mounted before
     * LXCFS started lets go of its loop device at its unmount while LXCFS runs).
     */
    List<String> holders() throws IOException {
        String dir = Path.of(backingFile).getParent().toString();
        List<String> found = new ArrayList<>();
        Set<String> entered = new HashSet<>(); // mount namespaces some process is in
        Map<Path, List<String>> heldOpen = new LinkedHashMap<>(); // process -> namespaces it holds open
        List<Path> processes;
        try (Stream<Path> listed = Files.list(PROC)) {
            processes = listed.filter(p -> isPid(p.getFileName().toString())).toList();
        }
        for (Path process : processes) {
            try {
                // one table per namespace, read through the first process found in it
                if (entered.add(
                        Files.readSymbolicLink(process.resolve("ns/mnt")).toString())) {
                    String table = Files.readString(process.resolve("mountinfo"));
                    if (table.contains("/dev/" + device + " ") || table.contains(dir + "/")) {
                        found.add(process.getFileName() + " " + comm(process));
                    }
                }
                heldOpen.put(process, namespacesHeldOpen(process));
            } catch (IOException gone) {
                // exited meanwhile, or not readable: not a holder we can name
            }
        }
        heldOpen.forEach((process, namespaces) -> namespaces.stream()
                .filter(held -> !entered.contains(held.substring(0, held.indexOf(' '))))
                .filter(held -> !comm(process).equals(LXCFS))
                .forEach(held ->
                        found.add(process.getFileName() + " " + comm(process) + " (mount namespace " + held + ")")));
        return found.size() > 8 ? List.copyOf(found.subList(0, 8)) : List.copyOf(found);
    }

    /** The mount namespaces {@code process} holds open, as "mnt:[N] held open as fd F". */
    private static List<String> namespacesHeldOpen(Path process) throws IOException {
        List<String> held = new ArrayList<>();
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(process.resolve("fd"))) {
            for (Path fd : fds) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("mnt:[")) {
                        held.add(target + " held open as fd " + fd.getFileName());
                    }
                } catch (IOException closed) {
                    // closed meanwhile
                }
            }
        }
        return held;
    }

    private static String comm(Path process) {
        try {
            return Files.readString(process.resolve("comm")).strip();
        } catch (IOException gone) {
            return "(exited)";
        }
    }

    private static boolean isPid(String name) {
        return !name.isEmpty() && name.chars().allMatch(c -> c >= '0' && c <= '9');
    }

    /** Whether the device has let go of {@link #backingFile} (detached, or bound to another file since). */
    public boolean released() throws IOException {
        return LoopDevices.backingFileOf(device)
                .map(now -> !now.equals(backingFile))
                .orElse(true);
    }

    /**
     * Waits until the device has let go of the file, polling sysfs after 1, 2, 4 ... up to 20 ms. Returns how long it
     * waited, in ms. After a second (half of {@link Bounds#quiet()} when shorter) it looks for {@link #holders()},
     * then again every second: while some process still holds a copy of the mount the filesystem cannot go, and the
     * wait goes on up to {@link Bounds#whileHeld()}; from the last time one was seen it allows {@code quiet} for the
     * kernel to write the filesystem out and clear the device.
     *
     * @throws IOException when it is still bound after {@code quiet} with no holder seen meanwhile, or after
     *         {@code whileHeld} (the message names the device, the file and the holders)
     */
    long awaitReleased(Bounds bounds) throws IOException {
        long started = System.nanoTime();
        long quiet = bounds.quiet().toNanos();
        long scanEvery = Math.min(SCAN_EVERY_NANOS, quiet / 2);
        long lastHeld = started;
        long nextScan = started + scanEvery;
        List<String> holders = List.of();
        long pause = TimeUnit.MILLISECONDS.toNanos(1);
        while (!released()) {
            long now = System.nanoTime();
            if (now - nextScan >= 0) {
                holders = holders();
                if (!holders.isEmpty()) {
                    lastHeld = now;
                }
                nextScan = now + scanEvery;
            }
            boolean heldTooLong = now - started - bounds.whileHeld().toNanos() >= 0;
            if (now - lastHeld - quiet >= 0 || heldTooLong) {
                if (released()) { // let go while the holders were read
                    break;
                }
                throw new IOException(device + " is still bound to " + backingFile + " " + (now - started) / 1_000_000
                        + " ms after its filesystem was unmounted: another mount namespace still holds a copy of the"
                        + " mount; "
                        + (holders.isEmpty()
                                ? "no process holds one (a lazily detached copy kept busy by an open file or working directory)"
                                : "held by: " + String.join(", ", holders)));
            }
            LockSupport.parkNanos(pause);
            if (Thread.interrupted()) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for " + device + " to let go of " + backingFile);
            }
            pause = Math.min(pause * 2, LONGEST_PAUSE_NANOS);
        }
        return (System.nanoTime() - started) / 1_000_000;
    }

    /**
     * How long {@link #awaitReleased} waits for a device to let go of its file.
     *
     * @param quiet how long without any process holding a copy of the mount (the kernel writing the filesystem out)
     * @param whileHeld how long at most, however long a process holds a copy (at least {@code quiet})
     */
    record Bounds(Duration quiet, Duration whileHeld) {

        Bounds {
            requireNonNull(quiet, "quiet is null");
            requireNonNull(whileHeld, "whileHeld is null");
            if (quiet.isNegative() || quiet.isZero() || whileHeld.compareTo(quiet) < 0) {
                throw new IllegalArgumentException(
                        "bounds must be positive with whileHeld at least quiet: " + quiet + ", " + whileHeld);
            }
        }
    }
}
