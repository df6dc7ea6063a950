package io.agentenv.libc;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * An open directory ({@code O_PATH}) and the {@code *at} calls on the entries it holds, for host code that works in a
 * tree another party may change at the same time (a sandbox writing to a volume it mounts). A descriptor keeps naming
 * the directory it was opened on whatever happens to the path that led there, so each call resolves at most one name,
 * and never follows a link there:
 *
 * <ul>
 *   <li>{@link #beneath} opens a directory below this one with {@code openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 *       RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)}: a link anywhere on the way, a {@code ..} that would climb out, or a
 *       mount crossing fails the call instead of being followed;
 *   <li>the entry calls ({@link #makeDir}, {@link #unlink}, {@link #rename}, {@link #changeOwner}, {@link #changeMode},
 *       {@link #openRegularFile}) take one name and act on a link itself or refuse it;
 *   <li>{@link #path(String)} names an entry for the JDK's own calls (stat, list, create-exclusive) through
 *       {@code /proc/self/fd/N/name}: the kernel jumps to this very directory, and those calls are made with
 *       {@code NOFOLLOW_LINKS} or {@code CREATE_NEW}, which do not follow the last name either.
 * </ul>
 *
 * Open flags are Linux's on x86-64 and arm64. Descriptors are close-on-exec; close each with {@link #close}.
 */
public final class DirFd implements AutoCloseable {
    private static final boolean ARM64 = "aarch64".equals(System.getProperty("os.arch"));
    private static final int AT_FDCWD = -100;
    private static final int O_RDONLY = 0;
    private static final int O_NONBLOCK = 04000;
    private static final int O_DIRECTORY = ARM64 ? 040000 : 0200000;
    private static final int O_NOFOLLOW = ARM64 ? 0100000 : 0400000;
    private static final int O_CLOEXEC = 02000000;
    private static final int O_PATH = 010000000;
    private static final long RESOLVE_NO_XDEV = 0x01;
    private static final long RESOLVE_NO_MAGICLINKS = 0x02;
    private static final long RESOLVE_NO_SYMLINKS = 0x04;
    private static final long RESOLVE_BENEATH = 0x08;
    private static final int AT_SYMLINK_NOFOLLOW = 0x100;
    private static final int AT_REMOVEDIR = 0x200;
    private static final int RENAME_NOREPLACE = 1;
    private static final long SYS_OPENAT2 = 437; // the same number on every architecture
    private static final int MAX_RETRIES = 8;

    // syscall(2) is variadic after the number; the arguments are passed as longs (dirfd is an int in the kernel)
    private static final MethodHandle SYSCALL = Libc.function(
            "syscall",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG),
            Linker.Option.firstVariadicArg(1));
    // openat without the mode argument: never called with O_CREAT
    private static final MethodHandle OPENAT =
            Libc.function("openat", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle MKDIRAT =
            Libc.function("mkdirat", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle UNLINKAT =
            Libc.function("unlinkat", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle RENAMEAT2 =
            Libc.function("renameat2", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle FCHOWNAT =
            Libc.function("fchownat", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT));
    // glibc refuses a link with EOPNOTSUPP under AT_SYMLINK_NOFOLLOW and changes anything else through its O_PATH fd
    private static final MethodHandle FCHMODAT =
            Libc.function("fchmodat", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
    private static final MethodHandle CLOSE = Libc.function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private final int fd;
    private final String name;
    private boolean closed;

    private DirFd(int fd, String name) {
        this.fd = fd;
        this.name = name;
    }

    /** Opens the directory {@code dir}, a path the caller trusts (links on the way are followed). */
    public static DirFd open(Path dir) throws IOException {
        String path = dir.toString();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            int opened = (int)
                    OPENAT.invokeExact(state, AT_FDCWD, arena.allocateFrom(path), O_PATH | O_DIRECTORY | O_CLOEXEC);
            if (opened < 0) {
                throw new ErrnoException("open", path, Libc.errno(state));
            }
            return new DirFd(opened, path);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Opens the directory {@code relative} ({@code a/b}; {@code .} for this one again) below this one. Fails with
     * {@code ELOOP} when a component is a symbolic link, {@code ENOTDIR} when one is not a directory, {@code EXDEV}
     * when the path would leave this directory or cross a mount.
     */
    public DirFd beneath(String relative) throws IOException {
        if (relative.isEmpty() || relative.startsWith("/") || relative.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("not a relative path: " + relative);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            MemorySegment how = arena.allocate(JAVA_LONG, 3); // struct open_how {flags, mode, resolve}
            how.setAtIndex(JAVA_LONG, 0, O_PATH | O_DIRECTORY | O_CLOEXEC); // no O_NOFOLLOW: a final link is ELOOP too
            how.setAtIndex(JAVA_LONG, 1, 0);
            how.setAtIndex(
                    JAVA_LONG, 2, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
            MemorySegment path = arena.allocateFrom(relative);
            for (int attempt = 0; ; attempt++) {
                long opened = (long) SYSCALL.invokeExact(state, SYS_OPENAT2, (long) fd, path, how, how.byteSize());
                if (opened >= 0) {
                    return new DirFd((int) opened, name + "/" + relative);
                }
                int errno = Libc.errno(state);
                // EAGAIN: a rename elsewhere in the tree raced the lookup (the kernel asks for a retry)
                if ((errno == ErrnoException.EAGAIN || errno == ErrnoException.EINTR) && attempt < MAX_RETRIES) {
                    continue;
                }
                throw new ErrnoException("openat2", name + "/" + relative, errno);
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    /** This directory, for the JDK's calls: {@code /proc/self/fd/N} (follow it; it is the directory itself). */
    public Path path() {
        requireOpen();
        return Path.of("/proc/self/fd", Integer.toString(fd));
    }

    /** The entry {@code entry} of this directory, for the JDK's calls made with {@code NOFOLLOW_LINKS}. */
    public Path path(String entry) {
        return path().resolve(checked(entry));
    }

    /** Makes the directory {@code entry}; false when something is there already (EEXIST). */
    public boolean makeDir(String entry, int mode) throws IOException {
        try {
            call("mkdirat", entry, (state, name) -> (int) MKDIRAT.invokeExact(state, fd, name, mode));
            return true;
        } catch (ErrnoException e) {
            if (e.errno() == ErrnoException.EEXIST) {
                return false;
            }
            throw e;
        }
    }

    /** Removes the entry {@code entry} that is not a directory (a link itself). */
    public void unlink(String entry) throws IOException {
        call("unlinkat", entry, (state, name) -> (int) UNLINKAT.invokeExact(state, fd, name, 0));
    }

    /** Removes the empty directory {@code entry}. */
    public void removeDir(String entry) throws IOException {
        call("unlinkat", entry, (state, name) -> (int) UNLINKAT.invokeExact(state, fd, name, AT_REMOVEDIR));
    }

    /**
     * Renames {@code entry} to {@code toEntry} in {@code to} (which may be this directory). With {@code replace} an
     * existing file or empty directory there is replaced atomically; without it an existing entry fails with EEXIST.
     */
    public void rename(String entry, DirFd to, String toEntry, boolean replace) throws IOException {
        to.requireOpen();
        String target = checked(toEntry);
        int flags = replace ? 0 : RENAME_NOREPLACE;
        call("renameat2", entry, (state, name) -> {
            try (Arena arena = Arena.ofConfined()) {
                return (int) RENAMEAT2.invokeExact(state, fd, name, to.fd, arena.allocateFrom(target), flags);
            }
        });
    }

    /** Changes the owner of {@code entry} (a link itself); -1 keeps the uid or gid as it is. */
    public void changeOwner(String entry, int uid, int gid) throws IOException {
        call("fchownat", entry, (state, name) ->
                (int) FCHOWNAT.invokeExact(state, fd, name, uid, gid, AT_SYMLINK_NOFOLLOW));
    }

    /** Changes the mode of {@code entry}; a link is refused (EOPNOTSUPP), never followed. */
    public void changeMode(String entry, int mode) throws IOException {
        call("fchmodat", entry, (state, name) ->
                (int) FCHMODAT.invokeExact(state, fd, name, mode, AT_SYMLINK_NOFOLLOW));
    }

    /**
     * Opens the regular file {@code entry} for reading. A link fails with ELOOP; a FIFO, socket or device is refused
     * without blocking or touching it (it is opened non-blocking, checked, and only a regular file is reopened).
     */
    public FileChannel openRegularFile(String entry) throws IOException {
        int raw = call("openat", entry, (state, name) ->
                (int) OPENAT.invokeExact(state, fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        Path opened = Path.of("/proc/self/fd", Integer.toString(raw));
        try {
            if (!Files.readAttributes(opened, BasicFileAttributes.class).isRegularFile()) {
                throw new FileSystemException(name + "/" + entry, null, "not a regular file");
            }
            return FileChannel.open(opened, StandardOpenOption.READ);
        } finally {
            closeRaw(raw);
        }
    }

    /** Flushes this directory's entries to disk (after a rename or a create in it). */
    public void sync() throws IOException {
        try (FileChannel channel = FileChannel.open(path(), StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            closeRaw(fd);
        }
    }

    @Override
    public String toString() {
        return "DirFd[" + fd + " " + name + "]";
    }

    // ---- calls -------------------------------------------------------------------------------------------------

    @FunctionalInterface
    private interface EntryCall {
        int run(MemorySegment state, MemorySegment name) throws Throwable;
    }

    /** Runs {@code call} on {@code entry}: its result when it is not negative, else an {@link ErrnoException}. */
    private int call(String what, String entry, EntryCall call) throws IOException {
        requireOpen();
        String checked = checked(entry);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            MemorySegment name = arena.allocateFrom(checked);
            for (int attempt = 0; ; attempt++) {
                int result = call.run(state, name);
                if (result >= 0) {
                    return result;
                }
                int errno = Libc.errno(state);
                if (errno == ErrnoException.EINTR && attempt < MAX_RETRIES) {
                    continue;
                }
                throw new ErrnoException(what, this.name + "/" + checked, errno);
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    private static String checked(String entry) {
        if (entry.isEmpty() || entry.equals("..") || entry.indexOf('/') >= 0 || entry.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("not one name in a directory: " + entry);
        }
        return entry;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    private static void closeRaw(int descriptor) {
        try (Arena arena = Arena.ofConfined()) {
            int ignored = (int) CLOSE.invokeExact(arena.allocate(Libc.CALL_STATE), descriptor);
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }
}
