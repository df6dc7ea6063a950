package io.agentenv.backend.container.storage;

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
import java.nio.file.Path;

/**
 * {@code mount(2)} and the loop device set-up through the FFM API, for the two mounts every new sandbox needs (its disk
 * and its overlay root): a {@code mount} process for each cost ~15 ms of wall time and ~4-6 ms of CPU on a busy host,
 * the system calls ~2 ms and ~0.6 ms (bench/container/MountBench.java). What {@code mount -o loop} did is done the same
 * way: a free loop device from {@code /dev/loop-control}, bound to the image with {@code LOOP_CONFIGURE} and
 * {@code LO_FLAGS_AUTOCLEAR} (so it detaches itself once the filesystem is unmounted and no one has it open), then the
 * filesystem mounted from it. Every descriptor is opened {@code O_CLOEXEC} (a process spawned meanwhile must not hold
 * it; see {@link Unmounts}) and closed before returning. Needs native access, as {@link Unmounts}.
 */
public final class Mounts {

    private static final int O_RDWR = 02;
    private static final int O_CLOEXEC = 02000000;
    private static final int EBUSY = 16;
    private static final long LOOP_CTL_GET_FREE = 0x4C82;
    private static final long LOOP_CONFIGURE = 0x4C0A;
    private static final int LO_FLAGS_AUTOCLEAR = 4;
    /** {@code struct loop_config}: fd, block_size, struct loop_info64 (232 bytes), 8 reserved u64. */
    private static final long LOOP_CONFIG_SIZE = 4 + 4 + 232 + 64;
    /** Offset of {@code info.lo_flags} in {@code struct loop_config}: 8 + five u64 + three u32. */
    private static final long LOOP_CONFIG_FLAGS = 8 + 40 + 12;
    /** Loop devices taken by someone else between asking for a free one and binding it, before giving up. */
    private static final int LOOP_ATTEMPTS = 16;

    private static final MethodHandle MOUNT =
            Libc.function("mount", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
    private static final MethodHandle OPEN = Libc.function("open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle CLOSE = Libc.function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle IOCTL =
            Libc.function("ioctl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle IOCTL_POINTER = Libc.function(
            "ioctl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS), Linker.Option.firstVariadicArg(2));

    private Mounts() {}

    /** Mounts an overlay filesystem with {@code options} (lowerdir, upperdir, workdir) at {@code target}. */
    static void overlay(String options, Path target) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            mount(arena, "overlay", target, "overlay", options);
        }
    }

    /** Mounts the ext4 image file {@code image} at {@code target} through a loop device of its own. */
    static void loopExt4(Path image, Path target, String options) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            int control = open(arena, "/dev/loop-control");
            try {
                int file = open(arena, image.toString());
                try {
                    mountThroughFreeLoop(arena, control, file, target, options);
                } finally {
                    close(file);
                }
            } finally {
                close(control);
            }
        }
    }

    private static void mountThroughFreeLoop(Arena arena, int control, int file, Path target, String options)
            throws IOException {
        MemorySegment state = arena.allocate(Libc.CALL_STATE);
        MemorySegment config = arena.allocate(LOOP_CONFIG_SIZE, 8);
        config.set(JAVA_INT, 0, file);
        config.set(JAVA_INT, LOOP_CONFIG_FLAGS, LO_FLAGS_AUTOCLEAR);
        for (int attempt = 1; ; attempt++) {
            int number = invoke(() -> (int) IOCTL.invokeExact(state, control, LOOP_CTL_GET_FREE));
            if (number < 0) {
                throw failure("ioctl(/dev/loop-control, LOOP_CTL_GET_FREE)", Libc.errno(state));
            }
            String device = "/dev/loop" + number;
            int loop = open(arena, device);
            try {
                int bound = invoke(() -> (int) IOCTL_POINTER.invokeExact(state, loop, LOOP_CONFIGURE, config));
                if (bound < 0 && Libc.errno(state) == EBUSY && attempt < LOOP_ATTEMPTS) {
                    continue; // taken by another mount between the two calls
                }
                if (bound < 0) {
                    throw failure("ioctl(" + device + ", LOOP_CONFIGURE)", Libc.errno(state));
                }
                // once bound, closing the last descriptor of an unmounted device detaches it (autoclear)
                mount(arena, device, target, "ext4", options);
                return;
            } finally {
                close(loop);
            }
        }
    }

    private static void mount(Arena arena, String source, Path target, String type, String options) throws IOException {
        MemorySegment state = arena.allocate(Libc.CALL_STATE);
        MemorySegment sourceName = arena.allocateFrom(source);
        MemorySegment targetName = arena.allocateFrom(target.toString());
        MemorySegment typeName = arena.allocateFrom(type);
        MemorySegment data = arena.allocateFrom(options);
        int result = invoke(() -> (int) MOUNT.invokeExact(state, sourceName, targetName, typeName, 0L, data));
        if (result < 0) {
            throw failure("mount(" + source + ", " + target + ", " + type + ")", Libc.errno(state));
        }
    }

    private static int open(Arena arena, String path) throws IOException {
        MemorySegment state = arena.allocate(Libc.CALL_STATE);
        MemorySegment name = arena.allocateFrom(path);
        int fd = invoke(() -> (int) OPEN.invokeExact(state, name, O_RDWR | O_CLOEXEC));
        if (fd < 0) {
            throw failure("open(" + path + ")", Libc.errno(state));
        }
        return fd;
    }

    private static void close(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            invoke(() -> (int) CLOSE.invokeExact(state, fd)); // Linux frees the descriptor even when close fails
        }
    }

    @FunctionalInterface
    private interface Call {
        int run() throws Throwable;
    }

    private static int invoke(Call call) {
        try {
            return call.run();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("native call failed", e);
        }
    }

    private static IOException failure(String call, int errno) {
        return new IOException(call + " failed: errno " + errno
                + switch (errno) {
                    case 1 -> " (EPERM: not root)";
                    case 2 -> " (ENOENT: no such file or directory)";
                    case 16 -> " (EBUSY: in use)";
                    case 22 -> " (EINVAL: invalid argument, e.g. a bad option or image)";
                    default -> " (see errno(3))";
                });
    }
}
