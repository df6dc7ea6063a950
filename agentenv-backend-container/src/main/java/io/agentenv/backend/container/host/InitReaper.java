package io.agentenv.backend.container.host;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.agentenv.libc.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes this server the parent of its containers' inits, so a killed sandbox leaves no zombie behind. runc detaches a
 * container's init (tini): without this, the host's init adopts it and reaps it on its own schedule (1-2 s on these
 * hosts), so a kill would either return while the sandbox's init is still in the process table or wait for that.
 * {@link #enable} marks the server a child subreaper ({@code prctl(PR_SET_CHILD_SUBREAPER)}); orphans of its
 * descendants then become its children. A close reaps its container's init, a zombie child named {@code tini},
 * at once ({@code waitpid(pid, WNOHANG)}; the JDK never starts a tini); a background sweep every second reaps those no
 * close waits for (containers stopped by a pause's checkpoint, template and warm-pool containers) and any other adopted
 * orphan (see {@link #sweep}). A sweep with nothing to reap is one {@code waitid} call, whatever the number of
 * sandboxes or server threads. Where native access is unavailable, nothing changes and closes wait for the host's init.
 */
public final class InitReaper implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(InitReaper.class);
    private static final int PR_SET_CHILD_SUBREAPER = 36;
    private static final int WNOHANG = 1;
    private static final int P_ALL = 0;
    private static final int WEXITED = 4;
    private static final int WNOWAIT = 0x01000000;
    private static final int EINTR = 4;
    private static final int ECHILD = 10;
    /** {@code siginfo_t} is 128 bytes; {@code si_pid} of a child's exit is at offset 16 on Linux's 64-bit ABIs. */
    private static final long SIGINFO_SIZE = 128;

    private static final long SI_PID = 16;
    /** Zombies reaped one after another in one sweep at most (a burst of closes); the rest wait for the next sweep. */
    private static final int MAX_PEEKS = 256;

    private static final Path SELF_TASKS = Path.of("/proc/self/task");

    private final Optional<MethodHandle> waitpid;
    private final Optional<MethodHandle> waitid;
    private final long self = ProcessHandle.current().pid();
    private final Thread sweeper;
    private final Optional<MethodHandle> prctl;
    /** Zombie children that were not reapable when found, with when they were first seen as zombies (nanoTime). */
    private volatile Map<HostProcess, Long> zombiesSince = Map.of();

    private final long orphanGraceNanos;
    private volatile boolean closed;

    private InitReaper(
            Optional<MethodHandle> prctl,
            Optional<MethodHandle> waitpid,
            Optional<MethodHandle> waitid,
            Duration every,
            Duration orphanGrace) {
        this.orphanGraceNanos = orphanGrace.toNanos();
        this.prctl = prctl;
        this.waitpid = waitpid;
        this.waitid = waitid;
        this.sweeper = Thread.ofVirtual().name("aenv-init-reaper").start(() -> sweepEvery(every));
    }

    /**
     * Becomes a subreaper (when the platform allows) and sweeps for zombie inits every {@code every}; any other zombie
     * child is reaped once it has been one for {@code orphanGrace} (and at least one sweep before).
     */
    public static InitReaper enable(Duration every, Duration orphanGrace) {
        if (orphanGrace.isNegative()) {
            throw new IllegalArgumentException("orphanGrace must not be negative: " + orphanGrace);
        }
        Optional<MethodHandle> waitpid = Optional.empty();
        Optional<MethodHandle> waitid = Optional.empty();
        Optional<MethodHandle> subreaper = Optional.empty();
        try (Arena arena = Arena.ofConfined()) {
            MethodHandle prctl = Libc.function(
                    "prctl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG), Linker.Option.firstVariadicArg(1));
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            int result = (int) prctl.invokeExact(state, PR_SET_CHILD_SUBREAPER, 1L);
            if (result == 0) {
                subreaper = Optional.of(prctl);
                waitpid = Optional.of(
                        Libc.function("waitpid", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT)));
                waitid = Optional.of(Libc.function(
                        "waitid", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT)));
            } else {
                log.atWarn()
                        .addKeyValue("errno", Libc.errno(state))
                        .log(
                                "prctl(PR_SET_CHILD_SUBREAPER) failed; killed containers' inits are reaped by the host's init");
            }
        } catch (Throwable e) { // IllegalCallerException without native access, or a platform without these symbols
            log.atWarn().setCause(e).log("no native access; killed containers' inits are reaped by the host's init");
        }
        return new InitReaper(subreaper, waitpid, waitid, every, orphanGrace);
    }

    /** Reaps {@code init} if it is a zombie child of this server; true when it is no longer in the process table. */
    public boolean reap(HostProcess init) throws IOException {
        if (!init.exists()) {
            return true;
        }
        if (waitpid.isPresent()
                && init.zombie()
                && init.parentPid() == self
                && init.name().equals(Optional.of("tini"))) {
            waitpid(init.pid());
        }
        return !init.exists();
    }

    /**
     * Reaps this server's zombie children that are not the JDK's own: a container init (tini) at once, any other
     * orphan (a test's bare container, a program that daemonized) once it was found a zombie at an earlier sweep and
     * has been one for the orphan grace (5 s in the server). The JDK reaps the processes it started the moment they
     * exit (its reaper thread waits on each), so a child still a zombie that long after is an adopted orphan, and
     * reaping it never takes an exit status the JDK waits for; a grace of one sweep alone was not enough under load
     * (a JDK child's status was taken with sweeps 20 ms apart at load ~10).
     *
     * <p>Which children are zombies is asked from the kernel without reaping ({@code waitid(P_ALL, WEXITED | WNOHANG |
     * WNOWAIT)}: one system call, answered from the server's own child lists), one zombie at a time: a reapable one is
     * reaped and the next asked for. Only when the zombie the kernel names must be left alone this sweep (the JDK's own,
     * or an orphan seen for the first time), which hides any zombie behind it, are all children listed from
     * {@code /proc/self/task/<tid>/children} as before.
     */
    void sweep() throws IOException {
        if (waitpid.isEmpty() || waitid.isEmpty()) {
            return;
        }
        for (int peeks = 0; peeks < MAX_PEEKS; peeks++) {
            long pid = peekZombie();
            if (pid <= 0) {
                zombiesSince = Map.of();
                return;
            }
            Optional<HostProcess> child = HostProcess.of(pid);
            if (child.isEmpty() || !child.get().zombie()) {
                continue; // reaped meanwhile (the JDK's own child)
            }
            if (!reapable(child.get())) {
                sweepAll();
                return;
            }
            waitpid(pid);
        }
    }

    /** The pid of some zombie child, left unreaped; 0 when there is none (or no child at all). */
    private long peekZombie() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            MemorySegment info = arena.allocate(SIGINFO_SIZE, 8); // zeroed: si_pid stays 0 when no child is waitable
            int result = (int) waitid.orElseThrow().invokeExact(state, P_ALL, 0, info, WEXITED | WNOHANG | WNOWAIT);
            if (result == 0) {
                return info.get(JAVA_INT, SI_PID);
            }
            int errno = Libc.errno(state);
            if (errno != ECHILD && errno != EINTR) { // ECHILD: no children; EINTR: asked again at the next sweep
                log.atWarn().addKeyValue("errno", errno).log("waitid failed");
            }
            return 0;
        } catch (Throwable e) {
            log.atWarn().setCause(e).log("waitid failed");
            return 0;
        }
    }

    private boolean reapable(HostProcess zombie) throws IOException {
        if (zombie.name().equals(Optional.of("tini"))) {
            return true;
        }
        Long since = zombiesSince.get(zombie);
        return since != null && System.nanoTime() - since >= orphanGraceNanos;
    }

    /** The sweep over every child of every server thread, for when a zombie that must stay hides the others. */
    private void sweepAll() throws IOException {
        Map<HostProcess, Long> zombies = new HashMap<>();
        long now = System.nanoTime();
        for (HostProcess child : children()) {
            if (!child.zombie()) {
                continue;
            }
            if (reapable(child)) {
                waitpid(child.pid());
            } else {
                zombies.put(child, zombiesSince.getOrDefault(child, now));
            }
        }
        zombiesSince = Map.copyOf(zombies);
    }

    private List<HostProcess> children() throws IOException {
        List<HostProcess> children = new ArrayList<>();
        try (Stream<Path> tasks = Files.list(SELF_TASKS)) {
            for (Path task : tasks.toList()) {
                String line;
                try {
                    line = Files.readString(task.resolve("children")).strip();
                } catch (IOException threadGone) {
                    continue;
                }
                if (!line.isEmpty()) {
                    for (String pid : line.split(" ")) {
                        HostProcess.of(Long.parseLong(pid)).ifPresent(children::add);
                    }
                }
            }
        }
        return children;
    }

    private void waitpid(long pid) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            int reaped = (int) waitpid.orElseThrow().invokeExact(state, (int) pid, MemorySegment.NULL, WNOHANG);
            if (reaped == pid) {
                log.atDebug().addKeyValue("pid", pid).log("container init reaped");
            } else if (reaped < 0 && Libc.errno(state) != ECHILD) { // ECHILD: reaped meanwhile by someone else
                log.atWarn()
                        .addKeyValue("pid", pid)
                        .addKeyValue("errno", Libc.errno(state))
                        .log("waitpid failed");
            }
        } catch (Throwable e) {
            log.atWarn().addKeyValue("pid", pid).setCause(e).log("waitpid failed");
        }
    }

    private void sweepEvery(Duration every) {
        while (!closed) {
            LockSupport.parkNanos(every.toNanos());
            try {
                sweep();
            } catch (IOException | RuntimeException e) {
                log.atDebug().setCause(e).log("zombie sweep failed; retrying");
            }
        }
    }

    /**
     * Stops being a subreaper (later orphans go to the host's init again, so nothing is left for a sweep nobody runs)
     * and stops the sweep after a last one. Another backend in the same process (tests) then falls back to waiting for
     * the host's init.
     */
    @Override
    public void close() throws InterruptedException {
        if (closed) {
            return;
        }
        closed = true;
        LockSupport.unpark(sweeper);
        sweeper.join();
        if (prctl.isPresent()) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment state = arena.allocate(Libc.CALL_STATE);
                if ((int) prctl.get().invokeExact(state, PR_SET_CHILD_SUBREAPER, 0L) != 0) {
                    log.atWarn().addKeyValue("errno", Libc.errno(state)).log("prctl(PR_SET_CHILD_SUBREAPER, 0) failed");
                }
            } catch (Throwable e) {
                log.atWarn().setCause(e).log("prctl(PR_SET_CHILD_SUBREAPER, 0) failed");
            }
        }
        try {
            sweep();
        } catch (IOException e) {
            log.atDebug().setCause(e).log("last zombie sweep failed");
        }
    }
}
