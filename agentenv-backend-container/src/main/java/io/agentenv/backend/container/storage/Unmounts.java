package io.agentenv.backend.container.storage;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.agentenv.libc.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code umount2(2)} through the FFM API: the pause path unmounts a sandbox's overlay and then its disk, and a
 * {@code umount} process for each costs ~5 ms of CPU and ~10 ms on a busy host (bench/container/disk.sh); the system
 * call is what that program does for these mounts (no userspace mount table: {@code /run/mount/utab} stays empty for
 * them, and a disk's loop device clears itself). Needs native access ({@code Enable-Native-Access} in the server
 * jar's manifest, {@code --enable-native-access=ALL-UNNAMED} otherwise; without it the JDK only warns).
 *
 * <p>An unmount that must complete ({@link #unmount}) retries EBUSY a few times within ~60 ms: a file the JVM opened
 * on the mount without {@code O_CLOEXEC} is also held, between fork and exec, by every process the server spawns at
 * that moment (runc, ip, nft for other sandboxes), which makes the mount busy for a moment although nothing of the
 * sandbox uses it any more. {@link GuestFileReads} opens with {@code O_CLOEXEC} for this reason; the retry covers
 * every other open.
 */
public final class Unmounts {

    private static final int ENOENT = 2;
    private static final int EBUSY = 16;
    private static final int EINVAL = 22;
    private static final int MNT_DETACH = 2;
    private static final MethodHandle UMOUNT2 =
            Libc.function("umount2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    /** EBUSY retries of {@link #unmount}, after 1, 2, 4 ... 32 ms: ~63 ms in all. */
    static final int BUSY_RETRIES = 6;

    /** The {@code umount2} system call (a seam for tests): 0 on success, else errno. */
    @FunctionalInterface
    interface Umount2 {
        int call(Path target, int flags);
    }

    private Unmounts() {}

    /** How {@link #unmountOrDetach} left a mount point. */
    public enum Outcome {
        NOT_MOUNTED,
        UNMOUNTED,
        DETACHED
    }

    /**
     * Unmounts {@code target} (no lazy detach: a mount still busy after {@link #BUSY_RETRIES} retries is an error).
     * Returns false when nothing is mounted there (EINVAL: not a mount point; ENOENT: no such path).
     */
    public static boolean unmount(Path target) throws IOException {
        return unmount(target, Unmounts::umount2);
    }

    public static boolean unmount(Path target, Umount2 umount2) throws IOException {
        int errno = umount2.call(target, 0);
        for (int retry = 0; errno == EBUSY && retry < BUSY_RETRIES; retry++) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1L << retry));
            errno = umount2.call(target, 0);
        }
        if (errno == 0) {
            return true;
        }
        if (errno == EINVAL || errno == ENOENT) {
            return false;
        }
        throw failure(target, errno);
    }

    /**
     * Unmounts {@code target}, and when it is busy detaches it lazily ({@code MNT_DETACH}: gone from the mount table
     * now, released by the kernel once its last user lets go). For what a failed {@code runc restore} left under its
     * state dir, which nothing of ours uses any more but a dying process may still hold for a moment.
     */
    public static Outcome unmountOrDetach(Path target) throws IOException {
        int errno = umount2(target, 0);
        if (errno == 0) {
            return Outcome.UNMOUNTED;
        }
        if (errno == EINVAL || errno == ENOENT) {
            return Outcome.NOT_MOUNTED;
        }
        if (errno != EBUSY) {
            throw failure(target, errno);
        }
        int detached = umount2(target, MNT_DETACH);
        if (detached == 0) {
            return Outcome.DETACHED;
        }
        if (detached == EINVAL || detached == ENOENT) {
            return Outcome.NOT_MOUNTED;
        }
        throw failure(target, detached);
    }

    /** 0 on success, else errno. */
    private static int umount2(Path target, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment path = arena.allocateFrom(target.toString());
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            int result = (int) UMOUNT2.invokeExact(state, path, flags);
            return result == 0 ? 0 : Libc.errno(state);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("umount2 call failed", e);
        }
    }

    private static IOException failure(Path target, int errno) {
        return new IOException("umount2(" + target + ") failed: errno " + errno + " (" + describe(errno) + ")");
    }

    private static String describe(int errno) {
        return switch (errno) {
            case 1 -> "EPERM: not root";
            case 16 -> "EBUSY: still in use";
            default -> "see errno(3)";
        };
    }
}
