package io.agentenv.backend.container.host;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.agentenv.libc.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sets a running container's hostname from this process, without starting {@code nsenter hostname} (a fork and two
 * execs: 8-21 ms of a warm-pool claim, measured): a platform thread of its own joins the container's UTS namespace
 * ({@code setns(2)} on {@code /proc/<pid>/ns/uts}, opened {@code O_CLOEXEC} so no concurrently started child inherits
 * it), calls {@code sethostname(2)} and joins this process's UTS namespace again (a descriptor of it opened when the
 * thread started). {@code setns} moves only the calling thread, and that thread runs nothing but these calls, so no
 * other code of this process ever sees a container's namespace. The thread serves one request after another (a
 * platform thread's start and end cost ~150-170 us of CPU, measured, more than the four system calls); if it cannot
 * return to this process's namespace it ends, and the next request starts another.
 */
public final class UtsHostname implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(UtsHostname.class);
    private static final int O_RDONLY = 0;
    private static final int O_CLOEXEC = 02000000;
    private static final int CLONE_NEWUTS = 0x04000000;
    /** HOST_NAME_MAX on Linux. */
    static final int MAX_LENGTH = 64;

    private static final MethodHandle OPEN = Libc.function("open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle SETNS =
            Libc.function("setns", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle SETHOSTNAME =
            Libc.function("sethostname", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle CLOSE = Libc.function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private final BlockingQueue<Pending> requests = new LinkedBlockingQueue<>();
    private final Object lock = new Object();
    /** The thread serving requests, if one runs. Guarded by lock. */
    private Thread worker;
    /** Guarded by lock. */
    private boolean closed;

    /** A hostname being set by the worker thread. */
    public static final class Pending {
        private final long pid;
        private final String hostname;
        private final CountDownLatch done = new CountDownLatch(1);
        private volatile Throwable failure;

        private Pending(long pid, String hostname) {
            this.pid = pid;
            this.hostname = hostname;
        }

        /** Completes it; the waiting caller runs on, nothing of the caller runs on the worker thread. */
        private void finish(Throwable failed) {
            failure = failed;
            done.countDown();
        }

        /** Waits until the hostname is set; its failure, if any, is thrown here. */
        public void await() throws IOException, InterruptedException {
            done.await(); // short: four system calls, after the requests queued before it
            switch (failure) {
                case null -> {}
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
    public Pending start(long pid, String hostname) {
        if (pid <= 0) {
            throw new IllegalArgumentException("not a process id: " + pid);
        }
        if (hostname.isEmpty()
                || hostname.length() > MAX_LENGTH
                || !hostname.chars().allMatch(UtsHostname::allowed)) {
            throw new IllegalArgumentException("not a hostname: " + hostname);
        }
        Pending request = new Pending(pid, hostname);
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("hostnames are no longer set: the backend is shut down");
            }
            requests.add(request);
            if (worker == null) {
                worker = Thread.ofPlatform().name("uts-hostname").daemon().start(this::serve);
            }
        }
        return request;
    }

    /** Sets it and waits: {@code start(pid, hostname).await()}. */
    public void set(long pid, String hostname) throws IOException, InterruptedException {
        start(pid, hostname).await();
    }

    /** Ends the worker thread; requests not served yet fail. Idempotent. */
    @Override
    public void close() throws InterruptedException {
        Thread running;
        synchronized (lock) {
            closed = true;
            running = worker;
        }
        if (running != null) {
            running.interrupt();
            running.join(); // it fails the requests left on its way out
        }
    }

    private static boolean allowed(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    }

    /**
     * The worker: serves requests until closed, or until it could not return to this process's UTS namespace. It never
     * starts a thread (a new thread shares the namespaces of the thread that starts it): the next {@link #start} does.
     */
    private void serve() {
        Throwable ended = null;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            String own = "/proc/thread-self/ns/uts";
            int home = (int) OPEN.invokeExact(state, arena.allocateFrom(own), O_RDONLY | O_CLOEXEC);
            if (home < 0) {
                ended = new IOException("open(" + own + ") failed: errno " + Libc.errno(state));
            } else {
                try {
                    ended = serveFrom(home, state);
                } finally {
                    closeQuietly(state, home);
                }
            }
        } catch (Throwable t) {
            ended = t;
        } finally {
            synchronized (lock) { // under the lock: a request queued after this has a new worker to serve it
                worker = null;
                List<Pending> left = new ArrayList<>();
                requests.drainTo(left);
                Throwable reason = ended != null
                        ? ended
                        : new IOException("hostnames are no longer set: the backend is shut down");
                left.forEach(r -> r.finish(reason));
            }
        }
    }

    /** Serves until interrupted (null) or until it could not return home (the reason, for the requests queued). */
    private Throwable serveFrom(int home, MemorySegment state) {
        while (true) {
            Pending request;
            try {
                request = requests.take();
            } catch (InterruptedException e) {
                return null; // closed
            }
            Throwable failure = null;
            try {
                inNamespaceOf(request.pid, request.hostname);
            } catch (Throwable t) {
                failure = t;
            }
            int back;
            try {
                back = (int) SETNS.invokeExact(state, home, CLONE_NEWUTS); // a no-op if the request never left
            } catch (Throwable t) {
                back = -1;
            }
            request.finish(failure);
            if (back != 0) {
                int errno = Libc.errno(state);
                log.atError()
                        .addKeyValue("errno", errno)
                        .log("the hostname thread could not return to the server's UTS namespace; it ends");
                return new IOException(
                        "the hostname thread could not return to the server's UTS namespace: errno " + errno);
            }
        }
    }

    /** Runs on the worker thread only: it is in the container's UTS namespace until it joins its own again. */
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
                closeQuietly(state, fd);
            }
            byte[] name = hostname.getBytes(StandardCharsets.US_ASCII);
            MemorySegment bytes = arena.allocate(name.length);
            bytes.copyFrom(MemorySegment.ofArray(name));
            if ((int) SETHOSTNAME.invokeExact(state, bytes, (long) name.length) != 0) {
                throw new IOException("sethostname in " + path + " failed: errno " + Libc.errno(state));
            }
        }
    }

    private static void closeQuietly(MemorySegment state, int fd) {
        try {
            int _ = (int) CLOSE.invokeExact(state, fd); // read-only: nothing to lose on a failed close
        } catch (Throwable t) {
            log.atWarn().setCause(t).log("closing a namespace descriptor failed");
        }
    }
}
