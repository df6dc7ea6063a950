package io.agentenv.backend.container.host;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static java.util.Objects.requireNonNull;

import io.agentenv.libc.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Watches one host process for its exit through a pidfd ({@code pidfd_open(2)}, Linux 5.3+, over the FFM API): the
 * descriptor becomes readable once the process has exited (a zombie included), so asking is one {@code poll(2)} with
 * a zero timeout and no {@code /proc} read, whatever the process is doing. The pidfd refers to that very process, so
 * a reused pid is never mistaken for it. Where pidfds are unavailable (no native access, an old kernel) it falls back
 * to reading {@code /proc/<pid>/stat} ({@link HostProcess#running}). Close it to give the descriptor back.
 */
public final class ExitWatch implements AutoCloseable {

    private static final int ESRCH = 3;
    private static final short POLLIN = 0x1;
    private static final StructLayout POLLFD = MemoryLayout.structLayout(
            JAVA_INT.withName("fd"), JAVA_SHORT.withName("events"), JAVA_SHORT.withName("revents"));
    private static final VarHandle POLL_FD = POLLFD.varHandle(MemoryLayout.PathElement.groupElement("fd"));
    private static final VarHandle POLL_EVENTS = POLLFD.varHandle(MemoryLayout.PathElement.groupElement("events"));
    private static final VarHandle POLL_REVENTS = POLLFD.varHandle(MemoryLayout.PathElement.groupElement("revents"));
    private static final Optional<Natives> NATIVES = Natives.link();

    /** libc's {@code pidfd_open}, {@code poll} and {@code close} ({@link Libc}); empty where they cannot be called. */
    private record Natives(MethodHandle pidfdOpen, MethodHandle poll, MethodHandle close) {
        static Optional<Natives> link() { // the descriptors match glibc's (2.36+) prototypes
            try {
                return Optional.of(new Natives(
                        Libc.function("pidfd_open", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT)),
                        Libc.function(
                                "poll",
                                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT)), // nfds_t: unsigned long
                        Libc.function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT))));
            } catch (
                    RuntimeException
                            e) { // IllegalCallerException without native access, IllegalStateException on old libcs
                return Optional.empty();
            }
        }
    }

    private final HostProcess process;
    private final int fd;
    private final AtomicBoolean closed = new AtomicBoolean();

    private ExitWatch(HostProcess process, int fd) {
        this.process = requireNonNull(process, "process is null");
        this.fd = fd;
    }

    /** Whether exits are watched through pidfds here (else through {@code /proc}). */
    static boolean pidfds() {
        return NATIVES.isPresent();
    }

    /**
     * Starts watching {@code process}; empty when it is no longer in the process table (so it exited and was reaped,
     * or never was).
     */
    public static Optional<ExitWatch> open(HostProcess process) throws IOException {
        if (NATIVES.isEmpty()) {
            return process.exists() ? Optional.of(new ExitWatch(process, -1)) : Optional.empty();
        }
        int opened;
        int errno;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            opened = (int) NATIVES.get().pidfdOpen().invokeExact(state, (int) process.pid(), 0);
            errno = Libc.errno(state);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("pidfd_open call failed", e);
        }
        if (opened < 0) {
            if (errno == ESRCH) {
                return Optional.empty();
            }
            throw new IOException("pidfd_open(" + process.pid() + ") failed: errno " + errno);
        }
        ExitWatch watch = new ExitWatch(process, opened);
        // the pid is not reused while its process is in the table, so if it (same start time) is still there now,
        // the descriptor opened a moment ago refers to it
        if (!process.exists()) {
            watch.close();
            return Optional.empty();
        }
        return Optional.of(watch);
    }

    public HostProcess process() {
        return process;
    }

    /**
     * Whether the process has exited (it may still be a zombie). Synchronized with {@link #close} (a zero-timeout poll,
     * never blocking), so a descriptor number closed and reused meanwhile is never polled.
     */
    public synchronized boolean exited() throws IOException {
        if (closed.get()) {
            throw new IllegalStateException("exit watch of pid " + process.pid() + " is closed");
        }
        if (fd < 0) {
            return !process.running();
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            MemorySegment pollfd = arena.allocate(POLLFD);
            POLL_FD.set(pollfd, 0L, fd);
            POLL_EVENTS.set(pollfd, 0L, POLLIN);
            int ready = (int) NATIVES.orElseThrow().poll().invokeExact(state, pollfd, 1L, 0);
            if (ready < 0) {
                throw new IOException("poll on the pidfd of " + process.pid() + " failed: errno " + Libc.errno(state));
            }
            return ready > 0 && (short) POLL_REVENTS.get(pollfd, 0L) != 0;
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("poll call failed", e);
        }
    }

    @Override
    public synchronized void close() {
        if (closed.compareAndSet(false, true) && fd >= 0) {
            try (Arena arena = Arena.ofConfined()) {
                int ignored = (int) NATIVES.orElseThrow().close().invokeExact(arena.allocate(Libc.CALL_STATE), fd);
            } catch (Throwable e) {
                throw new IllegalStateException("close of a pidfd failed", e);
            }
        }
    }
}
