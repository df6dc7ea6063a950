package io.agentenv.backend.container;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
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
 * @param device the device's name ({@code loop3})
 * @param backingFile the backing file as the kernel printed it when this was read
 */
record LoopBinding(String device, String backingFile) {

    private static final int LOOP_MAJOR = 7;
    private static final long LONGEST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    LoopBinding {
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
            device = Files.readSymbolicLink(Path.of("/sys/dev/block", major + ":" + minor)).getFileName().toString();
        } catch (NoSuchFileException gone) {
            return Optional.empty();
        }
        return LoopDevices.backingFileOf(device).map(file -> new LoopBinding(device, file));
    }

    /**
     * The processes (up to 8, "pid comm") whose mount table names the device or a path in the image's dir (a copy of
     * the overlay on the disk holds it too), for the error message; a lazily detached copy kept busy shows in none.
     */
    private String holders() {
        String dir = Path.of(backingFile).getParent().toString();
        List<String> found = new ArrayList<>();
        try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
            for (Path process : processes.filter(p -> p.getFileName().toString().matches("[0-9]+")).toList()) {
                try {
                    String table = Files.readString(process.resolve("mountinfo"));
                    if ((table.contains("/dev/" + device + " ") || table.contains(dir + "/")) && found.size() < 8) {
                        found.add(process.getFileName() + " " + Files.readString(process.resolve("comm")).strip());
                    }
                } catch (IOException gone) {
                    // exited meanwhile, or not readable: not a holder we can name
                }
            }
        } catch (IOException | UncheckedIOException e) {
            return "(unknown: " + e.getMessage() + ")";
        }
        return found.isEmpty() ? "none (a lazily detached copy kept busy by an open file or working directory)"
                : String.join(", ", found);
    }

    /** Whether the device has let go of {@link #backingFile} (detached, or bound to another file since). */
    boolean released() throws IOException {
        return LoopDevices.backingFileOf(device).map(now -> !now.equals(backingFile)).orElse(true);
    }

    /**
     * Waits until the device has let go of the file, polling sysfs after 1, 2, 4 ... up to 20 ms. Returns how long it
     * waited, in ms.
     *
     * @throws IOException when it is still bound after {@code timeout}: another mount namespace still holds a copy of
     *         the filesystem (the message names the device and the file)
     */
    long awaitReleased(Duration timeout) throws IOException {
        long started = System.nanoTime();
        long deadline = started + timeout.toNanos();
        long pause = TimeUnit.MILLISECONDS.toNanos(1);
        while (!released()) {
            if (System.nanoTime() - deadline >= 0) {
                throw new IOException(device + " is still bound to " + backingFile + " " + timeout.toMillis()
                        + " ms after its filesystem was unmounted: another mount namespace still holds a copy of the"
                        + " mount; processes whose mount table shows it: " + holders());
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
}
