package io.agentenv.backend.container.storage;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.agentenv.libc.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;

/**
 * Copies the end of a file out of a sandbox's filesystem through {@code open(2)}/{@code read(2)} over the FFM API,
 * because the JDK's file channels open without {@code O_CLOEXEC}: a process this server starts on another thread at that
 * moment (runc, ip, nft: the pause starts some alongside) inherits the descriptor until its own program runs, which
 * keeps the sandbox's disk mount busy, and the pause's unmount right after failed with EBUSY (measured: about every
 * third pause, no process holding anything there afterwards). Opened {@code O_CLOEXEC} (dropped at the child's exec),
 * {@code O_NOFOLLOW} (a symlink is refused) and {@code O_NONBLOCK} (a FIFO put there does not block the open).
 * {@link Unmounts#unmount} also retries a busy unmount briefly, for other opens; this read stays {@code O_CLOEXEC} so
 * the pause does not wait for that retry.
 */
public final class GuestFileReads {

    private static final int O_RDONLY = 0;
    private static final int O_NONBLOCK = 04000;
    private static final int O_NOFOLLOW = 0400000;
    private static final int O_CLOEXEC = 02000000;
    private static final int SEEK_SET = 0;
    private static final int SEEK_END = 2;
    private static final int EINTR = 4;
    private static final int CHUNK = 64 << 10;
    // libc's open (called without a mode), read, lseek and close
    private static final MethodHandle OPEN = Libc.function("open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle READ =
            Libc.function("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle LSEEK =
            Libc.function("lseek", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT));
    private static final MethodHandle CLOSE = Libc.function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private GuestFileReads() {}

    /**
     * Writes the last {@code max} bytes (all when shorter) of the file at {@code file} to {@code out} and returns how
     * many. The caller has checked that it is a regular file in a tree nothing changes meanwhile; a FIFO or device put
     * there anyway reads as whatever it gives without blocking (EAGAIN ends the copy as an error).
     */
    public static long copyTail(Path file, long max, WritableByteChannel out) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            int fd = (int) OPEN.invokeExact(
                    state, arena.allocateFrom(file.toString()), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
            if (fd < 0) {
                throw new IOException("open(" + file + ") failed: errno " + Libc.errno(state));
            }
            try {
                long size = (long) LSEEK.invokeExact(state, fd, 0L, SEEK_END);
                if (size < 0 || (long) LSEEK.invokeExact(state, fd, Math.max(0, size - max), SEEK_SET) < 0) {
                    throw new IOException("lseek(" + file + ") failed: errno " + Libc.errno(state));
                }
                MemorySegment buffer = arena.allocate(CHUNK);
                long copied = 0;
                while (copied < max) {
                    long n = (long) READ.invokeExact(state, fd, buffer, Math.min(CHUNK, max - copied));
                    if (n < 0 && Libc.errno(state) == EINTR) {
                        continue;
                    }
                    if (n < 0) {
                        throw new IOException("read(" + file + ") failed: errno " + Libc.errno(state));
                    }
                    if (n == 0) {
                        break;
                    }
                    ByteBuffer chunk = buffer.asSlice(0, n).asByteBuffer();
                    while (chunk.hasRemaining()) {
                        out.write(chunk);
                    }
                    copied += n;
                }
                return copied;
            } finally {
                int ignored = (int) CLOSE.invokeExact(state, fd); // read-only: nothing to lose when close fails
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("a libc call failed", e);
        }
    }
}
