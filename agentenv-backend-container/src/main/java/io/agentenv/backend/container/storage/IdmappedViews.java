package io.agentenv.backend.container.storage;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.GuestIds;
import io.agentenv.backend.container.host.TextDigest;
import io.agentenv.libc.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Idmapped views of the trees sandboxes start from (a template's rootfs, an unpacked image): every sandbox runs in a
 * user namespace whose ids 0-65535 are the host's {@link GuestIds}, so a tree owned by the host's root
 * must look owned by the guest's. A view is a bind mount of the tree with {@code MOUNT_ATTR_IDMAP}
 * ({@code open_tree(2)}, {@code mount_setattr(2)}, {@code move_mount(2)}) under {@code dir}, through a user namespace
 * with that mapping: the tree's files stay as they are (shared with servers that run without user namespaces, setuid
 * bits and file capabilities intact) and the overlay uses the view as its bottom layer. What sandboxes write lands in
 * their upper dirs with the guest's host ids already, so the layers made from them need no view.
 *
 * <p>Views are made on first use and kept until {@link #close}; views a crashed process left are unmounted when this
 * opens.
 */
public final class IdmappedViews implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(IdmappedViews.class);

    private static final long SYS_OPEN_TREE = 428;
    private static final long SYS_MOVE_MOUNT = 429;
    private static final long SYS_MOUNT_SETATTR = 442;
    private static final int AT_FDCWD = -100;
    private static final int AT_EMPTY_PATH = 0x1000;
    private static final int AT_RECURSIVE = 0x8000;
    private static final int OPEN_TREE_CLONE = 1;
    private static final int O_RDONLY = 0;
    private static final int O_CLOEXEC = 02000000;
    private static final int MOVE_MOUNT_F_EMPTY_PATH = 0x4;
    private static final long MOUNT_ATTR_RDONLY = 0x1;
    private static final long MOUNT_ATTR_IDMAP = 0x100000;
    /** {@code struct mount_attr}: attr_set, attr_clr, propagation, userns_fd (four u64). */
    private static final long MOUNT_ATTR_SIZE = 32;

    private static final Duration USERNS_WAIT = Duration.ofSeconds(10);

    // syscall(2) is variadic after the number
    private static final MethodHandle OPEN_TREE = Libc.function(
            "syscall",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT),
            Linker.Option.firstVariadicArg(1));
    private static final MethodHandle MOUNT_SETATTR = Libc.function(
            "syscall",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_LONG),
            Linker.Option.firstVariadicArg(1));
    private static final MethodHandle MOVE_MOUNT = Libc.function(
            "syscall",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT),
            Linker.Option.firstVariadicArg(1));
    private static final MethodHandle OPEN = Libc.function("open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle CLOSE = Libc.function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private final Path dir;
    private final GuestIds ids;
    private final Map<Path, Path> views = new ConcurrentHashMap<>();
    private final Object lock = new Object();
    /** A user namespace with the guests' mapping, made on first use; -1 before. Guarded by lock. */
    private int usernsFd = -1;

    /** Opens the views under {@code dir} (created), unmounting what an earlier process left there. */
    public IdmappedViews(Path dir, GuestIds ids) throws IOException {
        this.dir = requireNonNull(dir, "dir is null");
        this.ids = requireNonNull(ids, "ids is null");
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx--x--x"));
        removeLeftovers();
    }

    /** The ids the views map the host's root (and every id up to 65535) to. */
    public GuestIds ids() {
        return ids;
    }

    /** The idmapped view of {@code tree}, made on first use. */
    public Path view(Path tree) throws IOException {
        Path real = tree.toRealPath();
        Path existing = views.get(real);
        if (existing != null) {
            return existing;
        }
        synchronized (lock) {
            existing = views.get(real);
            if (existing != null) {
                return existing;
            }
            Path target = dir.resolve(TextDigest.sha256Hex(real.toString(), 16));
            if (Files.exists(target)) {
                Unmounts.unmount(target); // an earlier view of this tree (a view is never left half made)
            }
            Files.createDirectories(target);
            bindIdmapped(real, target, userns());
            views.put(real, target);
            log.atInfo().addKeyValue("tree", real).addKeyValue("view", target).log("idmapped view made");
            return target;
        }
    }

    private void bindIdmapped(Path tree, Path target, int userns) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            int tree0 = (int) (long) OPEN_TREE.invokeExact(
                    state,
                    SYS_OPEN_TREE,
                    AT_FDCWD,
                    arena.allocateFrom(tree.toString()),
                    OPEN_TREE_CLONE | O_CLOEXEC | AT_RECURSIVE);
            if (tree0 < 0) {
                throw new IOException("open_tree(" + tree + ") failed: errno " + Libc.errno(state));
            }
            try {
                MemorySegment attr = arena.allocate(MOUNT_ATTR_SIZE);
                attr.set(JAVA_LONG, 0, MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY);
                attr.set(JAVA_LONG, 24, userns);
                long set = (long) MOUNT_SETATTR.invokeExact(
                        state,
                        SYS_MOUNT_SETATTR,
                        tree0,
                        arena.allocateFrom(""),
                        AT_EMPTY_PATH | AT_RECURSIVE,
                        attr,
                        MOUNT_ATTR_SIZE);
                if (set < 0) {
                    throw new IOException("mount_setattr(" + tree + ", idmap) failed: errno " + Libc.errno(state)
                            + " (the filesystem must support idmapped mounts)");
                }
                long moved = (long) MOVE_MOUNT.invokeExact(
                        state,
                        SYS_MOVE_MOUNT,
                        tree0,
                        arena.allocateFrom(""),
                        AT_FDCWD,
                        arena.allocateFrom(target.toString()),
                        MOVE_MOUNT_F_EMPTY_PATH);
                if (moved < 0) {
                    throw new IOException(
                            "move_mount(" + tree + " -> " + target + ") failed: errno " + Libc.errno(state));
                }
            } finally {
                int closed = (int) CLOSE.invokeExact(state, tree0);
                assert closed == 0 || closed == -1;
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("native call failed", t);
        }
    }

    /**
     * A descriptor of a user namespace with the guests' mapping: a short-lived {@code unshare --user} child makes one,
     * the mapping is written from here (the host's root), and the descriptor keeps it once the child is gone.
     */
    private int userns() throws IOException {
        if (usernsFd >= 0) {
            return usernsFd;
        }
        Process child = new ProcessBuilder("unshare", "--user", "sleep", "60")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        try {
            Path ns = Path.of("/proc", Long.toString(child.pid()), "ns", "user");
            String own = Files.readSymbolicLink(Path.of("/proc/self/ns/user")).toString();
            long deadline = System.nanoTime() + USERNS_WAIT.toNanos();
            while (Files.readSymbolicLink(ns).toString().equals(own)) { // until unshare(2) has run
                if (System.nanoTime() > deadline || !child.isAlive()) {
                    throw new IOException("unshare --user did not make a user namespace");
                }
                Thread.onSpinWait();
            }
            ids.mapNamespaceOf(child.pid());
            usernsFd = open(ns);
            return usernsFd;
        } finally {
            child.destroyForcibly();
            try {
                child.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static int open(Path path) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            int fd = (int) OPEN.invokeExact(state, arena.allocateFrom(path.toString()), O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                throw new IOException("open(" + path + ") failed: errno " + Libc.errno(state));
            }
            return fd;
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("native call failed", t);
        }
    }

    private void removeLeftovers() throws IOException {
        List<Path> left = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            entries.forEach(left::add);
        }
        for (Path view : left) {
            Unmounts.unmount(view);
            Files.deleteIfExists(view);
        }
    }

    /** Unmounts every view (no sandbox may use one any more) and drops the user namespace. */
    @Override
    public void close() throws IOException {
        synchronized (lock) {
            for (Path view : views.values()) {
                Unmounts.unmount(view);
                Files.deleteIfExists(view);
            }
            views.clear();
            if (usernsFd >= 0) {
                try (Arena arena = Arena.ofConfined()) {
                    int closed = (int) CLOSE.invokeExact(arena.allocate(Libc.CALL_STATE), usernsFd);
                    assert closed == 0 || closed == -1;
                } catch (Throwable t) {
                    throw new IllegalStateException("native call failed", t);
                }
                usernsFd = -1;
            }
        }
    }
}
