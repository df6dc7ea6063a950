package io.agentenv.backend.container.guest;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.storage.SandboxDirs;
import io.agentenv.libc.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Files a sandbox sees under its {@code /proc} in place of the host kernel's: today
 * {@code /proc/sys/kernel/random/boot_id}, the sandbox's own boot id (every container shares the host's kernel, whose
 * boot id never changes while the host runs).
 *
 * <p>Each sandbox has a host dir of such files ({@link SandboxDirs#procFiles()}, root's, mode 0755, files 0444), bound
 * read-only into the container at {@link #GUEST_DIR} by its OCI config. Each file is then bind-mounted over its
 * {@code /proc} path, read-only, the way LXCFS presents {@code /proc/meminfo} and friends, except that runc 1.1 refuses
 * a config mount under {@code /proc} other than LXCFS's few files ({@code checkProcMount}), so the backend adds these
 * mounts itself on a cold boot, between {@code runc create} and {@code runc start} (no process of the sandbox runs yet):
 * {@link #mount} clones each host file as a detached read-only mount ({@code open_tree}, {@code mount_setattr}) in the
 * server's mount namespace, then a platform thread of its own leaves the server's filesystem context
 * ({@code unshare(CLONE_FS)}), joins the container's mount namespace ({@code setns}), opens the target without following
 * a final symlink, checks that it is on procfs, attaches the clone there ({@code move_mount}) and joins the server's
 * namespace again before it does anything else; the thread then ends. No path the sandbox controls is resolved in the
 * server's namespace, and no program of the sandbox's filesystem is run.
 *
 * <p>CRIU keeps these mounts: in its images each is a bind of a sub-path of the {@link #GUEST_DIR} mount (same
 * filesystem, its root below that mount's root, like runc's masked paths below {@code /dev}), and a restore binds it again
 * from the restored container's own {@link #GUEST_DIR}, which runc maps to the restoring sandbox's host dir. So a
 * restore sees whatever boot id the backend wrote into that dir before it: a new one for every sandbox from a template
 * (warm-pool members included), the kept one for a resume with memory, the source's for a fork child and a sandbox from a
 * snapshot (they continue its memory, as a Firecracker snapshot restore keeps the guest's boot id); a filesystem-only
 * pause ends every process, and its resume is a cold boot with a new one.
 */
public final class GuestProcFiles {

    /** Where a sandbox's host dir of these files is bound, read-only. */
    public static final String GUEST_DIR = "/run/agentenv/proc";
    /** The boot id, relative to {@code /proc} and to the host dir. */
    static final String BOOT_ID = "sys/kernel/random/boot_id";
    /** Every file shown over {@code /proc}, relative to it. */
    static final List<String> FILES = List.of(BOOT_ID);

    private static final Pattern UUID_TEXT =
            Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
    private static final int MAX_FILE = 64;

    private static final int AT_FDCWD = -100;
    private static final int AT_SYMLINK_NOFOLLOW = 0x100;
    private static final int AT_EMPTY_PATH = 0x1000;
    private static final int O_RDONLY = 0;
    private static final int O_NOFOLLOW = 0400000;
    private static final int O_CLOEXEC = 02000000;
    private static final int O_PATH = 010000000;
    private static final int OPEN_TREE_CLONE = 1;
    private static final int CLONE_FS = 0x200;
    private static final int CLONE_NEWNS = 0x20000;
    private static final int MOVE_MOUNT_F_EMPTY_PATH = 0x4;
    private static final int MOVE_MOUNT_T_EMPTY_PATH = 0x40;
    private static final long MOUNT_ATTR_RDONLY = 0x1;
    private static final long MOUNT_ATTR_NOSUID = 0x2;
    private static final long MOUNT_ATTR_NODEV = 0x4;
    private static final long MOUNT_ATTR_NOEXEC = 0x8;
    /** struct mount_attr: attr_set, attr_clr, propagation, userns_fd (four u64). */
    private static final long MOUNT_ATTR_SIZE = 32;
    /** struct statfs on x86_64 is 120 bytes; f_type is its first field (a long). */
    private static final long STATFS_SIZE = 120;

    private static final long PROC_SUPER_MAGIC = 0x9fa0;

    private static final MethodHandle OPEN = Libc.function("open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle CLOSE = Libc.function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle UNSHARE = Libc.function("unshare", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle SETNS =
            Libc.function("setns", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle FSTATFS =
            Libc.function("fstatfs", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
    private static final MethodHandle OPEN_TREE =
            Libc.function("open_tree", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle MOUNT_SETATTR = Libc.function(
            "mount_setattr", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle MOVE_MOUNT = Libc.function(
            "move_mount", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT));

    private GuestProcFiles() {}

    /** A new boot id: a random (version 4) UUID, as the kernel makes one at every boot. */
    public static String newBootId() {
        return UUID.randomUUID().toString();
    }

    /** Writes {@code bootId} into the sandbox's host dir (replacing an older one), before its container starts. */
    public static void writeBootId(SandboxDirs dirs, String bootId) throws IOException {
        if (!UUID_TEXT.matcher(requireNonNull(bootId, "bootId is null")).matches()) {
            throw new IllegalArgumentException("not a boot id: " + bootId);
        }
        Path file = dirs.procFiles().resolve(BOOT_ID);
        Files.createDirectories(file.getParent());
        Path partial = file.resolveSibling(".boot_id.partial");
        Files.deleteIfExists(partial);
        Files.writeString(
                partial,
                bootId + "\n",
                StandardCharsets.US_ASCII,
                StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS);
        Files.setPosixFilePermissions(partial, PosixFilePermissions.fromString("r--r--r--"));
        Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * The boot id in the sandbox's host dir; empty when it has none (a sandbox started before sandboxes had their own).
     * The dir is the server's and read-only inside the sandbox; a symlink is not followed all the same.
     */
    public static Optional<String> bootId(SandboxDirs dirs) throws IOException {
        Path file = dirs.procFiles().resolve(BOOT_ID);
        ByteBuffer buffer = ByteBuffer.allocate(MAX_FILE);
        try (SeekableByteChannel in = Files.newByteChannel(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            while (buffer.hasRemaining() && in.read(buffer) > 0) {
                // fill up to MAX_FILE bytes
            }
        } catch (NoSuchFileException none) {
            return Optional.empty();
        }
        String text = new String(buffer.array(), 0, buffer.position(), StandardCharsets.US_ASCII).strip();
        if (!UUID_TEXT.matcher(text).matches()) {
            throw new IOException("the boot id file " + file + " does not hold a boot id");
        }
        return Optional.of(text);
    }

    /**
     * Mounts each file of the sandbox's host dir over its {@code /proc} path in the mount namespace of {@code initPid}
     * (a container runc created and has not started), read-only. Fails when a file is missing or a target is not on
     * procfs.
     */
    public static void mount(long initPid, SandboxDirs dirs) throws IOException, InterruptedException {
        if (initPid <= 0) {
            throw new IllegalArgumentException("not a process id: " + initPid);
        }
        for (String file : FILES) {
            Path source = dirs.procFiles().resolve(file);
            if (!Files.isRegularFile(source, LinkOption.NOFOLLOW_LINKS)) {
                throw new IOException("no " + source + " to show at /proc/" + file);
            }
        }
        Throwable[] failure = new Throwable[1];
        Thread worker = Thread.ofPlatform().name("guest-proc-mount").unstarted(() -> {
            try {
                mountAll(initPid, dirs);
            } catch (Throwable t) {
                failure[0] = t;
            }
        });
        worker.start();
        worker.join(); // a handful of system calls
        switch (failure[0]) {
            case null -> {}
            case IOException e -> throw new IOException(e.getMessage(), e);
            case RuntimeException e -> throw e;
            case Error e -> throw e;
            case Throwable t -> throw new IOException("mounting the sandbox's /proc files failed", t);
        }
    }

    /** Runs on the worker thread only, which ends afterwards. */
    private static void mountAll(long initPid, SandboxDirs dirs) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            int[] sources = new int[FILES.size()];
            Arrays.fill(sources, -1);
            int home = -1;
            int container = -1;
            try {
                MemorySegment attr = arena.allocate(MOUNT_ATTR_SIZE);
                attr.set(JAVA_LONG, 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
                MemorySegment empty = arena.allocateFrom("");
                for (int i = 0; i < sources.length; i++) {
                    String path = dirs.procFiles().resolve(FILES.get(i)).toString();
                    sources[i] = (int) OPEN_TREE.invokeExact(
                            state,
                            AT_FDCWD,
                            arena.allocateFrom(path),
                            OPEN_TREE_CLONE | O_CLOEXEC | AT_SYMLINK_NOFOLLOW);
                    if (sources[i] < 0) {
                        throw new IOException("open_tree(" + path + ") failed: errno " + Libc.errno(state));
                    }
                    if ((int) MOUNT_SETATTR.invokeExact(state, sources[i], empty, AT_EMPTY_PATH, attr, MOUNT_ATTR_SIZE)
                            != 0) {
                        throw new IOException(
                                "mount_setattr(" + path + ", read-only) failed: errno " + Libc.errno(state));
                    }
                }
                String own = "/proc/thread-self/ns/mnt";
                home = (int) OPEN.invokeExact(state, arena.allocateFrom(own), O_RDONLY | O_CLOEXEC);
                if (home < 0) {
                    throw new IOException("open(" + own + ") failed: errno " + Libc.errno(state));
                }
                String ns = "/proc/" + initPid + "/ns/mnt";
                container = (int) OPEN.invokeExact(state, arena.allocateFrom(ns), O_RDONLY | O_CLOEXEC);
                if (container < 0) {
                    throw new IOException("open(" + ns + ") failed: errno " + Libc.errno(state));
                }
                if ((int) UNSHARE.invokeExact(state, CLONE_FS) != 0) {
                    throw new IOException("unshare(CLONE_FS) failed: errno " + Libc.errno(state));
                }
                MemorySegment[] targets = new MemorySegment[FILES.size()];
                for (int i = 0; i < targets.length; i++) {
                    targets[i] = arena.allocateFrom("/proc/" + FILES.get(i));
                }
                MemorySegment statfs = arena.allocate(STATFS_SIZE);
                // from here until back home: system calls only, their outcome kept in plain ints
                int[] outcome = new int[2]; // the failed step (0: none) and its errno
                inContainer(state, container, home, sources, targets, empty, statfs, outcome);
                if (outcome[0] != 0) {
                    throw new IOException(describe(outcome[0], outcome[1], ns));
                }
            } finally {
                for (int fd : sources) {
                    closeQuietly(state, fd);
                }
                closeQuietly(state, home);
                closeQuietly(state, container);
            }
        }
    }

    private static final int ENTER_FAILED = 1;
    private static final int TARGET_UNOPENED = 2;
    private static final int TARGET_UNCHECKED = 3;
    private static final int TARGET_NOT_PROC = 4;
    private static final int MOVE_FAILED = 5;
    private static final int RETURN_FAILED = 6;

    /**
     * In the container's mount namespace: attaches each source at its target; {@code outcome} gets the step that failed
     * (0 when none) and its errno. Always joins {@code home} again before it returns; failing that is
     * {@link #RETURN_FAILED}.
     */
    private static void inContainer(
            MemorySegment state,
            int container,
            int home,
            int[] sources,
            MemorySegment[] targets,
            MemorySegment empty,
            MemorySegment statfs,
            int[] outcome)
            throws Throwable {
        if ((int) SETNS.invokeExact(state, container, CLONE_NEWNS) != 0) {
            outcome[0] = ENTER_FAILED;
            outcome[1] = Libc.errno(state);
            return;
        }
        for (int i = 0; i < sources.length && outcome[0] == 0; i++) {
            int target = (int) OPEN.invokeExact(state, targets[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
            if (target < 0) {
                outcome[0] = TARGET_UNOPENED;
                outcome[1] = Libc.errno(state);
                break;
            }
            if ((int) FSTATFS.invokeExact(state, target, statfs) != 0) {
                outcome[0] = TARGET_UNCHECKED;
                outcome[1] = Libc.errno(state);
            } else if (statfs.get(JAVA_LONG, 0) != PROC_SUPER_MAGIC) {
                outcome[0] = TARGET_NOT_PROC;
            } else if ((int) MOVE_MOUNT.invokeExact(
                            state, sources[i], empty, target, empty, MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)
                    != 0) {
                outcome[0] = MOVE_FAILED;
                outcome[1] = Libc.errno(state);
            }
            int _ = (int) CLOSE.invokeExact(state, target);
        }
        if ((int) SETNS.invokeExact(state, home, CLONE_NEWNS) != 0) {
            outcome[0] = RETURN_FAILED;
            outcome[1] = Libc.errno(state);
        }
    }

    private static String describe(int step, int errno, String ns) {
        return switch (step) {
            case ENTER_FAILED -> "setns(" + ns + ") failed: errno " + errno;
            case TARGET_UNOPENED -> "the /proc file to cover cannot be opened in " + ns + ": errno " + errno;
            case TARGET_UNCHECKED -> "fstatfs of the /proc file to cover failed in " + ns + ": errno " + errno;
            case TARGET_NOT_PROC -> "the /proc file to cover in " + ns + " is not on procfs";
            case MOVE_FAILED -> "move_mount onto /proc in " + ns + " failed: errno " + errno;
            case RETURN_FAILED -> "the mount thread could not return to the server's mount namespace: errno " + errno;
            default -> "step " + step + " failed in " + ns + ": errno " + errno;
        };
    }

    private static void closeQuietly(MemorySegment state, int fd) {
        if (fd < 0) {
            return;
        }
        try {
            int _ = (int) CLOSE.invokeExact(state, fd);
        } catch (Throwable t) {
            // a descriptor of a mount or a namespace: nothing to lose
        }
    }
}
