package io.agentenv.envd.process;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives one dedicated platform thread ({@code envd-spawn-as-user}) a user's credentials for the duration of one
 * {@code posix_spawn}, so that the child starts as that user without a helper program ({@code setpriv}) in between.
 * <p>
 * Linux keeps credentials per task (thread). glibc's {@code setresuid}/{@code setgroups} wrappers change every thread
 * of the process; the raw system calls used here change only the calling one, and {@code posix_spawn}'s
 * {@code clone(CLONE_VM|CLONE_VFORK)} child starts with the calling thread's credentials. {@link #enter} sets the
 * supplementary groups, then {@code setresgid(g, g, g)}, then {@code setresuid(u, u, 0)}: the effective capabilities
 * are dropped (the effective uid leaves 0), the permitted ones stay (the saved uid is still 0), and the child's
 * {@code execve} makes its saved uid the effective one (1000, say) and, for a real and effective uid that are not 0
 * and a program without file capabilities, its permitted, effective and ambient sets empty. {@link #leave} undoes it
 * in reverse order ({@code setresuid(0, 0, 0)} copies the permitted set back into the effective one), checks the
 * result with {@code getresuid}/{@code getresgid}, and restores the process's dumpable flag, which the kernel resets
 * to {@code fs.suid_dumpable} whenever a thread's effective uid changes.
 * <p>
 * Between {@link #enter} and {@link #leave} the thread runs only the {@code posix_spawn} downcall: every handle is
 * linked and warmed before the first real switch, so no class is loaded, no file opened and nothing logged with the
 * user's credentials. Virtual threads never switch (they can change carriers); callers hand their start to the
 * dedicated thread with {@link #run}, which runs jobs one at a time.
 * <p>
 * If the thread cannot be returned to envd's credentials, it is retired: it never runs anything else (it parks for
 * good), later jobs are refused with {@link Unavailable} and the launcher goes back to {@code setpriv}. Halting envd
 * instead would take the sandbox's every process with it for a failure that only concerns this one thread.
 * <p>
 * What the window exposes to the user's own processes (kernel permission checks against the thread's credentials):
 * with a real uid of the user's, the thread may be signalled ({@code tgkill}; a signal's action is process-wide, so
 * SIGKILL/SIGSTOP/SIGTERM reach envd as a whole) and reniced or pinned ({@code setpriority}, {@code
 * sched_setaffinity}), and the vfork child may be stopped before its {@code execve} (which holds this thread until
 * it continues). That is denial of service of envd, which the template's user (passwordless sudo) can do anyway; no
 * more: {@code ptrace}, {@code /proc/<pid>/mem}, {@code prlimit} and {@code process_vm_readv} of the thread or the
 * child (which shares envd's memory until its {@code execve}) stay refused, since the saved uid is still 0, the
 * permitted capabilities are not a subset of the user's, and the process is not dumpable during the window.
 * <p>
 * One class on purpose (beyond the usual size): the calls of the window, the only thread allowed to make them and its
 * retirement are one security argument and are read together.
 */
@SuppressWarnings("restricted") // FFM downcalls into glibc: envd runs with native access enabled (jar manifest)
final class CredentialSwitch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CredentialSwitch.class);
    private static final int PR_GET_DUMPABLE = 3;
    private static final int PR_SET_DUMPABLE = 4;
    /** The kernel's NGROUPS_MAX: a longer list is refused by setgroups. */
    static final int MAX_GROUPS = 65536;

    /** The system call numbers this needs, per architecture. */
    record Syscalls(
            long setgroups,
            long setresuid,
            long getresuid,
            long setresgid,
            long getresgid,
            long getgroups,
            long prctl,
            long gettid,
            long returnSetresuid) {
        static Optional<Syscalls> forArch(String arch) {
            return switch (arch) {
                case "amd64", "x86_64" -> Optional.of(new Syscalls(116, 117, 118, 119, 120, 115, 157, 186, 117));
                case "aarch64" -> Optional.of(new Syscalls(159, 147, 148, 149, 150, 158, 167, 178, 147));
                default -> Optional.empty();
            };
        }

        /** The same calls, except that the way back ({@code setresuid(0, 0, 0)}) uses {@code number}: tests only. */
        Syscalls withReturnSetresuid(long number) {
            return new Syscalls(
                    setgroups, setresuid, getresuid, setresgid, getresgid, getgroups, prctl, gettid, number);
        }
    }

    /** The switching thread cannot be used (retired or closed): start through {@code setpriv} instead. */
    static final class Unavailable extends IOException {
        private static final long serialVersionUID = 1L;

        Unavailable(String message) {
            super(message);
        }
    }

    /** The switch to a user's credentials was refused (the thread is back at envd's): that start fails. */
    static final class Refused extends IOException {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }

    /**
     * The thread could not be returned to envd's credentials and is retired. Carries what the caller must clean up on
     * its own thread: the child, if one was started ({@code pid > 0}).
     */
    static final class Stuck extends Error {
        private static final long serialVersionUID = 1L;
        private final int pid;
        private final List<Integer> descriptors;

        /**
         * @param pid the child started in the window, or 0
         * @param descriptors the job's descriptors still open
         */
        Stuck(int pid, List<Integer> descriptors) {
            super("the spawning thread could not return to envd's credentials", null, false, false);
            this.pid = pid;
            this.descriptors = List.copyOf(descriptors);
        }

        int pid() {
            return pid;
        }

        List<Integer> descriptors() {
            return descriptors;
        }
    }

    /** Who a process starts as: uid, gid and exactly these supplementary groups. */
    record Target(int uid, int gid, List<Integer> groups) {
        Target {
            if (uid < 0 || gid < 0) {
                throw new IllegalArgumentException("uid and gid must not be negative: " + uid + ", " + gid);
            }
            groups = List.copyOf(groups);
        }

        int[] groupArray() {
            return groups.stream().mapToInt(Integer::intValue).toArray();
        }
    }

    private enum State {
        RUNNING,
        RETIRED,
        CLOSED
    }

    private record Job(Callable<?> work, CompletableFuture<Object> result) {}

    private final Syscalls calls;
    private final MethodHandle sysLongs;
    private final MethodHandle sysAddresses;
    private final MethodHandle sysCountAddress;
    private final VarHandle errno;
    /** Used only by the switching thread (and once by {@link #start} before it runs). */
    private final MemorySegment callState;

    private final MemorySegment ids;
    private final MemorySegment idEffective;
    private final MemorySegment idSaved;
    private final MemorySegment ownGroups;
    private final int ownGroupCount;
    private final int ownUid;
    private final int ownGid;
    private final boolean dumpable;
    private final BlockingQueue<Job> jobs = new LinkedBlockingQueue<>();
    private final AtomicReference<State> state = new AtomicReference<>(State.RUNNING);
    private final CompletableFuture<Integer> tid = new CompletableFuture<>();
    private final Thread thread;
    /** Set by the switching thread when {@link #leave} failed: it is then retired after its job. */
    private boolean cannotReturn;

    private CredentialSwitch(Linker linker, SymbolLookup libc, Syscalls calls) {
        this.calls = requireNonNull(calls, "calls is null");
        var syscall = libc.find("syscall").orElseThrow();
        var captureErrno = Linker.Option.captureCallState("errno");
        var variadic = Linker.Option.firstVariadicArg(1);
        sysLongs = linker.downcallHandle(
                syscall,
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG),
                variadic,
                captureErrno);
        sysAddresses = linker.downcallHandle(
                syscall,
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS),
                variadic,
                captureErrno);
        sysCountAddress = linker.downcallHandle(
                syscall, FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS), variadic, captureErrno);
        var stateLayout = Linker.Option.captureStateLayout();
        errno = stateLayout.varHandle(MemoryLayout.PathElement.groupElement("errno"));
        Arena arena = Arena.ofAuto();
        callState = arena.allocate(stateLayout);
        ids = arena.allocate(JAVA_INT, 3);
        idEffective = ids.asSlice(JAVA_INT.byteSize());
        idSaved = ids.asSlice(2 * JAVA_INT.byteSize());
        ownGroups = arena.allocate(JAVA_INT, MAX_GROUPS);
        int[] uids = resIds(calls.getresuid());
        int[] gids = resIds(calls.getresgid());
        if (uids[0] != 0 || uids[1] != 0 || uids[2] != 0) {
            throw new IllegalStateException(
                    "envd does not run as root (uids " + uids[0] + "/" + uids[1] + "/" + uids[2] + ")");
        }
        if (gids[0] != gids[1] || gids[1] != gids[2]) {
            throw new IllegalStateException("envd's real, effective and saved gids differ");
        }
        ownUid = 0;
        ownGid = gids[0];
        ownGroupCount = (int) check(sysCount(calls.getgroups(), MAX_GROUPS, ownGroups), "getgroups");
        dumpable = check(sys(calls.prctl(), PR_GET_DUMPABLE, 0, 0), "prctl(PR_GET_DUMPABLE)") == 1;
        thread = Thread.ofPlatform().name("envd-spawn-as-user").daemon().unstarted(this::serve);
    }

    /**
     * Starts the switching thread where it can work: envd runs as root on a supported architecture ({@code calls}
     * present) with raw system calls available; otherwise empty, with the reason logged.
     */
    static Optional<CredentialSwitch> start(Linker linker, SymbolLookup libc, Optional<Syscalls> calls) {
        if (calls.isEmpty()) {
            log.atInfo()
                    .addKeyValue("arch", System.getProperty("os.arch"))
                    .log(
                            "direct user switch unavailable (architecture): processes of other users start through setpriv");
            return Optional.empty();
        }
        return start(linker, libc, calls.get());
    }

    static Optional<CredentialSwitch> start(Linker linker, SymbolLookup libc, Syscalls calls) {
        try {
            CredentialSwitch credentials = new CredentialSwitch(linker, libc, calls);
            credentials.thread.start();
            credentials.tid.join();
            return Optional.of(credentials);
        } catch (RuntimeException e) {
            log.atInfo()
                    .addKeyValue("cause", e.toString())
                    .log("direct user switch unavailable: processes of other users start through setpriv");
            return Optional.empty();
        }
    }

    /** envd's own credentials as a target (the warm-up's window switches to them). */
    Target self() {
        List<Integer> groups = new ArrayList<>(ownGroupCount);
        for (int i = 0; i < ownGroupCount; i++) {
            groups.add(ownGroups.getAtIndex(JAVA_INT, i));
        }
        return new Target(ownUid, ownGid, groups);
    }

    /** Whether jobs are taken (false once the thread is retired or closed). */
    boolean usable() {
        return state.get() == State.RUNNING;
    }

    /** The switching thread's kernel task id (for /proc/self/task/&lt;tid&gt;). */
    int tid() {
        return tid.join();
    }

    /** The process's dumpable flag as the kernel reports it now (1: dumpable); any thread may ask. */
    int dumpable() {
        try (Arena arena = Arena.ofConfined()) {
            long result = (long) sysLongs.invokeExact(
                    arena.allocate(Linker.Option.captureStateLayout()), calls.prctl(), (long) PR_GET_DUMPABLE, 0L, 0L);
            if (result < 0) {
                throw new IllegalStateException("prctl(PR_GET_DUMPABLE) failed");
            }
            return (int) result;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Runs {@code work} on the switching thread (where {@link #enter} and {@link #leave} may be called) and returns its
     * result; waits uninterruptibly, since the work starts a process that must not run unobserved.
     */
    @SuppressWarnings("unchecked")
    <T> T run(Callable<T> work) throws IOException {
        if (state.get() != State.RUNNING) {
            throw new Unavailable(
                    "the user-switching thread is " + state.get().name().toLowerCase(Locale.ROOT));
        }
        Job job = new Job(work, new CompletableFuture<>());
        jobs.add(job);
        if (state.get() != State.RUNNING) {
            failQueued(); // raced with retirement or close: nobody else may drain the queue any more
        }
        try {
            return (T) job.result().join();
        } catch (CompletionException e) {
            switch (e.getCause()) {
                case IOException io -> throw io;
                case RuntimeException runtime -> throw runtime;
                case Error error -> throw error;
                case Throwable other -> throw new IOException(other);
            }
        }
    }

    private void serve() {
        tid.complete((int) sys(calls.gettid(), 0, 0, 0));
        while (state.get() == State.RUNNING) {
            Job job;
            try {
                job = jobs.take();
            } catch (InterruptedException e) {
                continue; // close() interrupts: the loop's condition decides
            }
            Object result = null;
            Throwable failure = null;
            try {
                result = job.work().call();
            } catch (Throwable e) {
                failure = e;
            }
            if (cannotReturn) {
                retire(job, failure);
            } else if (failure == null) {
                job.result().complete(result);
            } else {
                job.result().completeExceptionally(failure);
            }
        }
        failQueued();
    }

    /**
     * This task keeps a user's credentials: it tells its caller and the queued jobs (whatever the job threw, even if
     * that fails), then never runs anything else.
     */
    private void retire(Job job, Throwable failure) {
        try {
            state.set(State.RETIRED);
            job.result().completeExceptionally(failure instanceof Stuck ? failure : new Stuck(0, List.of()));
            failQueued();
        } catch (Throwable ignored) {
            // nothing more may run here; the caller's join stays open only if even that allocation failed
        }
        while (true) {
            LockSupport.park(this);
        }
    }

    private void failQueued() {
        for (Job job; (job = jobs.poll()) != null; ) {
            job.result().completeExceptionally(new Unavailable("the user-switching thread stopped taking work"));
        }
    }

    /**
     * Switches the calling (switching) thread to {@code uid}, {@code gid} and the {@code count} groups at
     * {@code groups}. Returns 0, or the failed step (1 setgroups, 2 setresgid, 3 setresuid) shifted left by 16 with
     * its errno; whatever it returns, {@link #leave} must follow, in a {@code finally}.
     */
    int enter(int uid, int gid, MemorySegment groups, int count) {
        if (Thread.currentThread() != thread) {
            throw new IllegalStateException("credentials switch only on " + thread.getName());
        }
        if (sysCount(calls.setgroups(), count, groups) != 0) {
            return 1 << 16 | lastErrno();
        }
        if (sys(calls.setresgid(), gid, gid, gid) != 0) {
            return 2 << 16 | lastErrno();
        }
        if (sys(calls.setresuid(), uid, uid, 0) != 0) {
            return 3 << 16 | lastErrno();
        }
        return 0;
    }

    /**
     * Returns the switching thread to envd's credentials. False if it could not: the thread is then retired after its
     * job (the caller throws {@link Stuck} so that its own caller cleans up); never throws.
     */
    boolean leave() {
        if (Thread.currentThread() != thread) {
            return true; // enter refused to switch any other thread
        }
        boolean back;
        try {
            back = sys(calls.returnSetresuid(), ownUid, ownUid, ownUid) == 0
                    && sys(calls.setresgid(), ownGid, ownGid, ownGid) == 0
                    && sysCount(calls.setgroups(), ownGroupCount, ownGroups) == 0
                    && sysAddresses(calls.getresuid()) == 0
                    && ids.getAtIndex(JAVA_INT, 0) == ownUid
                    && ids.getAtIndex(JAVA_INT, 1) == ownUid
                    && ids.getAtIndex(JAVA_INT, 2) == ownUid
                    && sysAddresses(calls.getresgid()) == 0
                    && ids.getAtIndex(JAVA_INT, 0) == ownGid
                    && ids.getAtIndex(JAVA_INT, 1) == ownGid
                    && ids.getAtIndex(JAVA_INT, 2) == ownGid
                    // the euid changes reset the process's dumpable flag to fs.suid_dumpable: envd's stays what it was
                    && (!dumpable || sys(calls.prctl(), PR_SET_DUMPABLE, 1, 0) == 0);
        } catch (Throwable e) {
            back = false;
        }
        if (!back) {
            cannotReturn = true;
        }
        return back;
    }

    /** The call that failed, for a code {@link #enter} returned. */
    static String failedCall(int code) {
        return switch (code >>> 16) {
            case 1 -> "setgroups";
            case 2 -> "setresgid";
            case 3 -> "setresuid";
            default -> "the switch";
        };
    }

    static int errnoOf(int code) {
        return code & 0xffff;
    }

    private int[] resIds(long number) {
        check(sysAddresses(number), "getres[ug]id");
        return new int[] {ids.getAtIndex(JAVA_INT, 0), ids.getAtIndex(JAVA_INT, 1), ids.getAtIndex(JAVA_INT, 2)};
    }

    private long sys(long number, long a, long b, long c) {
        try {
            return (long) sysLongs.invokeExact(callState, number, a, b, c);
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    private long sysCount(long number, long count, MemorySegment address) {
        try {
            return (long) sysCountAddress.invokeExact(callState, number, count, address);
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    /** getresuid/getresgid into {@link #ids}. */
    private long sysAddresses(long number) {
        try {
            return (long) sysAddresses.invokeExact(callState, number, ids, idEffective, idSaved);
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    private int lastErrno() {
        return (int) errno.get(callState, 0L);
    }

    private long check(long result, String call) {
        if (result < 0) {
            throw new IllegalStateException(call + " failed: errno " + lastErrno());
        }
        return result;
    }

    /** Stops taking jobs; queued ones are refused. */
    @Override
    public void close() {
        if (state.compareAndSet(State.RUNNING, State.CLOSED)) {
            thread.interrupt();
        }
    }
}
