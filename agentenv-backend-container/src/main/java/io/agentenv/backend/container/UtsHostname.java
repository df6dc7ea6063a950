package io.agentenv.backend.container;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Sets a running container's hostname from this process, without starting {@code nsenter hostname} (a fork and two
 * execs: 8-21 ms of a warm-pool claim, measured): a platform thread of its own joins the container's UTS namespace
 * ({@code setns(2)} on {@code /proc/<pid>/ns/uts}, opened {@code O_CLOEXEC} so no concurrently started child inherits
 * it), calls {@code sethostname(2)} and ends. {@code setns} moves only the calling thread, and that thread never runs
 * anything else, so no other code of this process ever sees the container's namespace.
 */
final class UtsHostname {

    private static final int O_RDONLY = 0;
    private static final int O_CLOEXEC = 02000000;
    private static final int CLONE_NEWUTS = 0x04000000;
    /** HOST_NAME_MAX on Linux. */
    static final int MAX_LENGTH = 64;
    private static final MethodHandle OPEN = Libc.function("open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle SETNS = Libc.function("setns", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle SETHOSTNAME = Libc.function("sethostname", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle CLOSE = Libc.function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private UtsHostname() {
    }

    /** A hostname being set by its own thread. */
    static final class Pending {
        private final Thread worker;
        private final AtomicReference<Throwable> failure;

        private Pending(Thread worker, AtomicReference<Throwable> failure) {
            this.worker = worker;
            this.failure = failure;
        }

        /** Waits until the hostname is set; its failure, if any, is thrown here. */
        void await() throws IOException, InterruptedException {
            worker.join(); // short: four system calls; the thread (and the namespace it joined) ends with them
            switch (failure.get()) {
                case null -> { }
                case IOException e -> throw new IOException(e.getMessage(), e);
                case RuntimeException e -> throw e;
                case Error e -> throw e;
                case Throwable t -> throw new IOException("setting the hostname failed", t);
            }
        }
    }

    /**
     * Starts setting the hostname of the UTS namespace process {@code pid} is in to {@code hostname} (1 to
     * {@value #MAX_LENGTH} ASCII letters, digits, '-' and '.'); {@link Pending#await} for it.
     */
    static Pending start(long pid, String hostname) {
        if (pid <= 0) {
            throw new IllegalArgumentException("not a process id: " + pid);
        }
        if (hostname.isEmpty() || hostname.length() > MAX_LENGTH || !hostname.chars().allMatch(UtsHostname::allowed)) {
            throw new IllegalArgumentException("not a hostname: " + hostname);
        }
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread worker = Thread.ofPlatform().name("uts-hostname").daemon().start(() -> {
            try {
                inNamespaceOf(pid, hostname);
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        return new Pending(worker, failure);
    }

    /** Sets it and waits: {@code start(pid, hostname).await()}. */
    static void set(long pid, String hostname) throws IOException, InterruptedException {
        start(pid, hostname).await();
    }

    private static boolean allowed(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    }

    /** Runs on the thread of its own only: it stays in the container's UTS namespace until it ends. */
    private static void inNamespaceOf(long pid, String hostname) throws Throwable {
        String path = "/proc/" + pid + "/ns/uts";
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            int fd = (int) OPEN.invokeExact(state, arena.allocateFrom(path), O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                throw new IOException("open(" + path + ") failed: errno " + Libc.errno(state));
            }
            try {
                if ((int) SETNS.invokeExact(state, fd, CLONE_NEWUTS) != 0) {
                    throw new IOException("setns(" + path + ") failed: errno " + Libc.errno(state));
                }
            } finally {
                int unused = (int) CLOSE.invokeExact(state, fd); // read-only: nothing to lose on a failed close
            }
            byte[] name = hostname.getBytes(StandardCharsets.US_ASCII);
            MemorySegment bytes = arena.allocate(name.length);
            bytes.copyFrom(MemorySegment.ofArray(name));
            if ((int) SETHOSTNAME.invokeExact(state, bytes, (long) name.length) != 0) {
                throw new IOException("sethostname in " + path + " failed: errno " + Libc.errno(state));
            }
        }
    }
}
