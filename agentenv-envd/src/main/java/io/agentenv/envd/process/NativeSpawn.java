package io.agentenv.envd.process;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static java.util.Objects.requireNonNull;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts piped processes without stdin with glibc's {@code posix_spawn} through the FFM API: the child becomes a
 * session and process group leader ({@code POSIX_SPAWN_SETSID}), starts with an empty signal mask and default signal
 * dispositions, in its working directory, with exactly the given environment, stdin from {@code /dev/null} and no
 * inherited file descriptor beyond 0, 1 and 2. It replaces the JDK's launch chain ({@code posix_spawn} of
 * {@code jspawnhelper}, which execs util-linux {@code setsid}, which execs the command): two fewer program starts per
 * command.
 * <p>
 * The parent's pipe ends are re-opened through {@code /proc/self/fd} as JDK file streams. Unlike the JDK's own
 * process pipes, a read of those blocks the thread's carrier, so their readers must be platform threads
 * ({@link #readers}); and a process with stdin is left to the JDK, whose pipe writes let virtual threads block.
 * Exit statuses are collected by {@code waitpid} on a pooled platform thread per running process, and reported like
 * the JDK does (128+N for death by signal N).
 * <p>
 * A process of another user ({@link #startAs}, envd as root) is started on {@link CredentialSwitch}'s thread with the
 * user's credentials around the {@code posix_spawn} call alone: its {@code chdir} and {@code execve} run as the user
 * (as in E2B's envd: a working directory the user cannot enter fails the start), with no helper program in between.
 * The window stays here, around the one {@code posix_spawn} call site that both kinds of start share (hence the size).
 * <p>
 * {@link #load} is empty where this cannot work (no glibc 2.34+ symbols, no native access, no {@code /proc}, or a
 * closed standard descriptor in envd that a pipe could take the place of); the launcher then uses the JDK.
 */
@SuppressWarnings("restricted") // FFM downcalls into glibc: envd runs with native access enabled (jar manifest)
final class NativeSpawn implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(NativeSpawn.class);
    private static final short POSIX_SPAWN_SETSIGDEF = 0x04;
    private static final short POSIX_SPAWN_SETSIGMASK = 0x08;
    private static final short POSIX_SPAWN_SETSID = 0x80;
    private static final int O_RDONLY = 0;
    private static final int O_CLOEXEC = 0x80000;
    private static final int EINTR = 4;
    /** Larger than glibc's posix_spawnattr_t (336 bytes), posix_spawn_file_actions_t (80) and sigset_t (128). */
    private static final long OPAQUE_SIZE = 1024;

    private final MethodHandle spawn;
    private final MethodHandle attrInit;
    private final MethodHandle attrDestroy;
    private final MethodHandle attrSetFlags;
    private final MethodHandle attrSetSigMask;
    private final MethodHandle attrSetSigDefault;
    private final MethodHandle actionsInit;
    private final MethodHandle actionsDestroy;
    private final MethodHandle actionsDup2;
    private final MethodHandle actionsOpen;
    private final MethodHandle actionsChdir;
    private final MethodHandle actionsCloseFrom;
    private final MethodHandle sigEmptySet;
    private final MethodHandle sigFillSet;
    private final MethodHandle pipe2;
    private final MethodHandle close;
    private final MethodHandle waitpid;
    private final MethodHandle strerror;
    private final StructLayout callState;
    private final VarHandle errno;
    /** Platform threads for the blocking calls of running processes: waitpid, and reads of their pipes. */
    private final ExecutorService blocking;
    /** Starts processes as other users (envd as root only); set once by {@link #load}. */
    private Optional<CredentialSwitch> users = Optional.empty();

    private NativeSpawn(Linker linker, SymbolLookup libc) {
        FunctionDescriptor intPtr = FunctionDescriptor.of(JAVA_INT, ADDRESS);
        spawn = handle(
                linker,
                libc,
                "posix_spawn",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
        attrInit = handle(linker, libc, "posix_spawnattr_init", intPtr);
        attrDestroy = handle(linker, libc, "posix_spawnattr_destroy", intPtr);
        attrSetFlags =
                handle(linker, libc, "posix_spawnattr_setflags", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_SHORT));
        attrSetSigMask =
                handle(linker, libc, "posix_spawnattr_setsigmask", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        attrSetSigDefault = handle(
                linker, libc, "posix_spawnattr_setsigdefault", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        actionsInit = handle(linker, libc, "posix_spawn_file_actions_init", intPtr);
        actionsDestroy = handle(linker, libc, "posix_spawn_file_actions_destroy", intPtr);
        actionsDup2 = handle(
                linker,
                libc,
                "posix_spawn_file_actions_adddup2",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
        actionsOpen = handle(
                linker,
                libc,
                "posix_spawn_file_actions_addopen",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
        actionsChdir = handle(
                linker,
                libc,
                "posix_spawn_file_actions_addchdir_np",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        actionsCloseFrom = handle(
                linker,
                libc,
                "posix_spawn_file_actions_addclosefrom_np",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        sigEmptySet = handle(linker, libc, "sigemptyset", intPtr);
        sigFillSet = handle(linker, libc, "sigfillset", intPtr);
        pipe2 = handle(linker, libc, "pipe2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        close = handle(linker, libc, "close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        Linker.Option captureErrno = Linker.Option.captureCallState("errno");
        callState = Linker.Option.captureStateLayout();
        errno = callState.varHandle(MemoryLayout.PathElement.groupElement("errno"));
        waitpid = linker.downcallHandle(
                libc.find("waitpid").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT),
                captureErrno);
        strerror = handle(linker, libc, "strerror", FunctionDescriptor.of(ADDRESS, JAVA_INT));
        blocking = Executors.newCachedThreadPool(
                Thread.ofPlatform().name("envd-native-io-", 0).daemon().factory());
    }

    /** The native launcher, or empty (with the reason logged) where it cannot work on this machine. */
    static Optional<NativeSpawn> load() {
        return load(CredentialSwitch.Syscalls.forArch(System.getProperty("os.arch")));
    }

    /** {@link #load()} with these system call numbers for the credential switch (tests: a broken way back). */
    static Optional<NativeSpawn> load(Optional<CredentialSwitch.Syscalls> calls) {
        for (int fd = 0; fd <= 2; fd++) {
            if (!Files.exists(Path.of("/proc/self/fd/" + fd))) {
                log.atInfo()
                        .addKeyValue("fd", fd)
                        .log("native spawn unavailable (a standard descriptor is closed or "
                                + "/proc is missing): processes start through the JDK");
                return Optional.empty();
            }
        }
        try {
            Linker linker = Linker.nativeLinker();
            NativeSpawn spawn = new NativeSpawn(linker, linker.defaultLookup());
            spawn.warmUp();
            spawn.users = CredentialSwitch.start(linker, linker.defaultLookup(), calls);
            spawn.users.ifPresent(spawn::warmUpSwitch);
            return Optional.of(spawn);
        } catch (RuntimeException | Error e) {
            // NoSuchElementException (glibc older than 2.34), IllegalCallerException (no native access), ...
            log.atInfo()
                    .addKeyValue("cause", e.toString())
                    .log("native spawn unavailable: processes start through the JDK");
            return Optional.empty();
        }
    }

    private static MethodHandle handle(Linker linker, SymbolLookup libc, String name, FunctionDescriptor descriptor) {
        return linker.downcallHandle(libc.find(name).orElseThrow(), descriptor);
    }

    /** Runs the calls of a spawn once without starting anything, so the first real command does not link them. */
    private void warmUp() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(OPAQUE_SIZE, 16);
            MemorySegment actions = arena.allocate(OPAQUE_SIZE, 16);
            MemorySegment set = arena.allocate(OPAQUE_SIZE, 16);
            check((int) attrInit.invokeExact(attr), "posix_spawnattr_init");
            check((int) actionsInit.invokeExact(actions), "posix_spawn_file_actions_init");
            try {
                check((int) sigEmptySet.invokeExact(set), "sigemptyset");
                check((int) sigFillSet.invokeExact(set), "sigfillset");
                check((int) attrSetFlags.invokeExact(attr, POSIX_SPAWN_SETSID), "posix_spawnattr_setflags");
                check((int) attrSetSigMask.invokeExact(attr, set), "posix_spawnattr_setsigmask");
                check((int) attrSetSigDefault.invokeExact(attr, set), "posix_spawnattr_setsigdefault");
                check((int) actionsCloseFrom.invokeExact(actions, 3), "posix_spawn_file_actions_addclosefrom_np");
                check(
                        (int) actionsChdir.invokeExact(actions, arena.allocateFrom("/")),
                        "posix_spawn_file_actions_addchdir_np");
            } finally {
                int ignored = (int) actionsDestroy.invokeExact(actions);
                ignored = (int) attrDestroy.invokeExact(attr);
            }
            MemorySegment _ = (MemorySegment) strerror.invokeExact(0);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Runs the credential switch's window once with envd's own credentials and a program that does not exist, so that
     * every call in it is linked and resolved before the first window with a user's credentials (where no class may
     * load). The failed {@code posix_spawn}'s child is reaped by glibc.
     */
    private void warmUpSwitch(CredentialSwitch credentials) {
        try {
            Process none = startAs(
                    credentials.self(),
                    List.of("/proc/self/envd-spawn-warm-up-does-not-exist"),
                    Map.of(),
                    Path.of("/"));
            none.destroyForcibly();
            throw new IllegalStateException("the credential switch's warm-up started a program that does not exist");
        } catch (CredentialSwitch.Refused e) {
            log.atInfo()
                    .addKeyValue("cause", e.getMessage())
                    .log("direct user switch unavailable: processes of other users start through setpriv");
            credentials.close();
            users = Optional.empty();
        } catch (IOException expected) {
            log.atDebug().addKeyValue("cause", expected.getMessage()).log("credential switch warmed up");
        }
    }

    /** The credential switch, if this launcher has one (envd as root). */
    Optional<CredentialSwitch> users() {
        return users;
    }

    /** True where processes of other users start without a helper program ({@link #startAs}). */
    boolean switchesUsers() {
        return users.map(CredentialSwitch::usable).orElse(false);
    }

    /**
     * Runs the loops that read a native-spawned process's output: pooled platform threads (a blocking read must not
     * pin a carrier; reusing threads keeps thread creation off each command's path).
     */
    Executor readers() {
        return blocking;
    }

    /** Starts {@code argv} (argv[0] an absolute path) in {@code cwd} with exactly {@code env}, stdin {@code /dev/null}. */
    Process start(List<String> argv, Map<String, String> env, Path cwd) throws IOException {
        return start(argv, env, cwd, null);
    }

    /**
     * Like {@link #start}, but the child runs as {@code user} (real, effective, saved and filesystem ids, exactly its
     * groups, no capabilities), started on the credential switch's thread. Throws {@link CredentialSwitch.Unavailable}
     * where there is no switch (envd not root) or it was retired: the caller then uses {@code setpriv}.
     */
    Process startAs(CredentialSwitch.Target user, List<String> argv, Map<String, String> env, Path cwd)
            throws IOException {
        requireNonNull(user, "user is null");
        CredentialSwitch credentials = users.filter(CredentialSwitch::usable)
                .orElseThrow(() -> new CredentialSwitch.Unavailable("no usable credential switch"));
        try {
            return credentials.run(() -> start(argv, env, cwd, user));
        } catch (CredentialSwitch.Stuck stuck) {
            // cleaned up here, on the caller's thread: the retired thread runs nothing else
            closeAll(new ArrayList<>(stuck.descriptors()));
            if (stuck.pid() > 0) {
                ProcessHandle.of(stuck.pid()).ifPresent(ProcessHandle::destroyForcibly);
                blocking.execute(() -> awaitExit(stuck.pid()));
            }
            log.atError()
                    .addKeyValue("uid", user.uid())
                    .addKeyValue("killed_pid", stuck.pid())
                    .log("the user-switching thread could not return to envd's credentials: it is retired and runs "
                            + "nothing else; processes of other users start through setpriv from now on");
            throw new IOException(
                    "could not return to envd's credentials after starting as uid " + user.uid()
                            + " (the process was stopped); try again",
                    stuck);
        }
    }

    private Process start(List<String> argv, Map<String, String> env, Path cwd, CredentialSwitch.Target as)
            throws IOException {
        requireNonNull(argv, "argv is null");
        requireNonNull(env, "env is null");
        requireNonNull(cwd, "cwd is null");
        List<Integer> open = new ArrayList<>(6);
        try (Arena arena = Arena.ofConfined()) {
            int[] out = pipe(arena, open);
            int[] err = pipe(arena, open);
            int pid = spawn(arena, argv, env, cwd, out, err, as, open);
            InputStream stdout = null;
            try {
                // our ends, re-opened as JDK streams while the originals still keep both ends of every pipe open
                stdout = new FileInputStream(fdPath(out[0]));
                InputStream stderr = new FileInputStream(fdPath(err[0]));
                closeAll(open);
                SpawnedProcess process = new SpawnedProcess(pid, OutputStream.nullOutputStream(), stdout, stderr);
                blocking.execute(() -> process.exited(awaitExit(pid)));
                return process;
            } catch (IOException | RuntimeException e) {
                // out of descriptors or threads: the child must not run on unobserved, nor stay a zombie
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
                Thread.ofPlatform().daemon().start(() -> awaitExit(pid));
                if (stdout != null) {
                    stdout.close();
                }
                throw e;
            }
        } catch (IOException | RuntimeException e) {
            closeAll(open);
            throw e;
        }
    }

    @SuppressWarnings("Finally") // a thread stuck in the user's credentials must throw Stuck, whatever the try did
    private int spawn(
            Arena arena,
            List<String> argv,
            Map<String, String> env,
            Path cwd,
            int[] out,
            int[] err,
            CredentialSwitch.Target as,
            List<Integer> open)
            throws IOException {
        MemorySegment attr = arena.allocate(OPAQUE_SIZE, 16);
        MemorySegment actions = arena.allocate(OPAQUE_SIZE, 16);
        MemorySegment signals = arena.allocate(OPAQUE_SIZE, 16);
        MemorySegment pid = arena.allocate(JAVA_INT);
        try {
            check((int) attrInit.invokeExact(attr), "posix_spawnattr_init");
            check((int) actionsInit.invokeExact(actions), "posix_spawn_file_actions_init");
            try {
                check(
                        (int) attrSetFlags.invokeExact(
                                attr, (short) (POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)),
                        "posix_spawnattr_setflags");
                check((int) sigEmptySet.invokeExact(signals), "sigemptyset");
                check((int) attrSetSigMask.invokeExact(attr, signals), "posix_spawnattr_setsigmask");
                check((int) sigFillSet.invokeExact(signals), "sigfillset");
                check((int) attrSetSigDefault.invokeExact(attr, signals), "posix_spawnattr_setsigdefault");
                check(
                        (int) actionsOpen.invokeExact(actions, 0, arena.allocateFrom("/dev/null"), O_RDONLY, 0),
                        "posix_spawn_file_actions_addopen");
                check((int) actionsDup2.invokeExact(actions, out[1], 1), "posix_spawn_file_actions_adddup2");
                check((int) actionsDup2.invokeExact(actions, err[1], 2), "posix_spawn_file_actions_adddup2");
                check(
                        (int) actionsChdir.invokeExact(actions, arena.allocateFrom(cwd.toString())),
                        "posix_spawn_file_actions_addchdir_np");
                check((int) actionsCloseFrom.invokeExact(actions, 3), "posix_spawn_file_actions_addclosefrom_np");
                MemorySegment args = strings(arena, argv);
                List<String> pairs = new ArrayList<>(env.size());
                env.forEach((k, v) -> pairs.add(k + "=" + v));
                MemorySegment envp = strings(arena, pairs);
                MemorySegment path = arena.allocateFrom(argv.getFirst());
                int error = 0;
                if (as == null) {
                    error = (int) spawn.invokeExact(pid, path, actions, attr, args, envp);
                } else {
                    CredentialSwitch credentials = users.orElseThrow();
                    int[] groupIds = as.groupArray();
                    MemorySegment groups =
                            groupIds.length == 0 ? arena.allocate(JAVA_INT) : arena.allocateFrom(JAVA_INT, groupIds);
                    int refused = 0;
                    // the window: nothing but the switch, posix_spawn and the way back runs with the user's credentials
                    try {
                        refused = credentials.enter(as.uid(), as.gid(), groups, groupIds.length);
                        if (refused == 0) {
                            error = (int) spawn.invokeExact(pid, path, actions, attr, args, envp);
                        }
                    } finally {
                        if (!credentials.leave()) {
                            throw new CredentialSwitch.Stuck(
                                    refused == 0 && error == 0 ? pid.get(JAVA_INT, 0) : 0, open);
                        }
                    }
                    if (refused != 0) {
                        throw new CredentialSwitch.Refused("cannot start a process as uid " + as.uid() + " gid "
                                + as.gid() + " with "
                                + groupIds.length + " groups: " + CredentialSwitch.failedCall(refused) + " failed: "
                                + describe(CredentialSwitch.errnoOf(refused)));
                    }
                    if (error != 0) {
                        throw new IOException("Cannot run program \"" + argv.getFirst() + "\" as uid " + as.uid()
                                + " in \"" + cwd + "\": error=" + error + ", " + describe(error));
                    }
                }
                if (error != 0) {
                    throw new IOException(
                            "Cannot run program \"" + argv.getFirst() + "\": error=" + error + ", " + describe(error));
                }
                return pid.get(JAVA_INT, 0);
            } finally {
                int ignored = (int) actionsDestroy.invokeExact(actions);
                ignored = (int) attrDestroy.invokeExact(attr);
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IOException("posix_spawn failed", e);
        }
    }

    private int[] pipe(Arena arena, List<Integer> open) throws IOException {
        MemorySegment fds = arena.allocate(JAVA_INT, 2);
        try {
            check((int) pipe2.invokeExact(fds, O_CLOEXEC), "pipe2");
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IOException("pipe2 failed", e);
        }
        int[] pair = {fds.getAtIndex(JAVA_INT, 0), fds.getAtIndex(JAVA_INT, 1)};
        open.add(pair[0]);
        open.add(pair[1]);
        return pair;
    }

    private static MemorySegment strings(Arena arena, List<String> values) {
        MemorySegment array = arena.allocate(ADDRESS, values.size() + 1);
        for (int i = 0; i < values.size(); i++) {
            array.setAtIndex(ADDRESS, i, arena.allocateFrom(values.get(i)));
        }
        array.setAtIndex(ADDRESS, values.size(), MemorySegment.NULL);
        return array;
    }

    private static String fdPath(int fd) {
        return "/proc/self/fd/" + fd;
    }

    private void closeAll(List<Integer> fds) {
        for (int fd : fds) {
            try {
                int ignored = (int) close.invokeExact(fd);
            } catch (Throwable e) {
                log.atWarn().addKeyValue("fd", fd).setCause(e).log("could not close a pipe descriptor");
            }
        }
        fds.clear();
    }

    /** Blocks (on a platform thread) until {@code pid} exits; its status the way the JDK reports it. */
    private int awaitExit(int pid) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment status = arena.allocate(JAVA_INT);
            MemorySegment state = arena.allocate(callState);
            while (true) {
                int result = (int) waitpid.invokeExact(state, pid, status, 0);
                if (result == pid) {
                    int s = status.get(JAVA_INT, 0);
                    int signal = s & 0x7f;
                    return signal == 0 ? (s >> 8) & 0xff : 0x80 + signal;
                }
                int error = (int) errno.get(state, 0L);
                if (result < 0 && error != EINTR) {
                    log.atWarn()
                            .addKeyValue("pid", pid)
                            .addKeyValue("errno", error)
                            .log("waitpid failed");
                    return -1;
                }
            }
        } catch (Throwable e) {
            log.atWarn().addKeyValue("pid", pid).setCause(e).log("waitpid failed");
            return -1;
        }
    }

    private String describe(int error) {
        try {
            MemorySegment text = (MemorySegment) strerror.invokeExact(error);
            return text.reinterpret(256).getString(0);
        } catch (Throwable e) {
            return "errno " + error;
        }
    }

    private static void check(int result, String call) throws IOException {
        if (result != 0) {
            throw new IOException(call + " failed: " + result);
        }
    }

    /** Stops the exit waiters' pool from growing; waiters of running processes finish when their process does. */
    @Override
    public void close() {
        users.ifPresent(CredentialSwitch::close);
        blocking.shutdown();
    }
}
