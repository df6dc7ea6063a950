// What the two mounts of every new sandbox cost (its disk: an ext4 image through a loop device; its root: an overlay),
// done the way the backend used to (a `mount` process each: `mount -t ext4 -o loop,...` and
// `mount -t overlay ...`) and the way it does now (Mounts: LOOP_CTL_GET_FREE + LOOP_CONFIGURE with autoclear, then
// mount(2), over the FFM API); each followed by umount2(2). Prints per mount + unmount the wall time and the CPU time
// (this JVM's user + sys, and its waited-for children's, from /proc/self/stat): the CPU does not depend on the load.
// A warm-up round first; a scratch dir under /var/tmp with a 10 GiB sparse image, removed at the end. Run as root:
//   java --enable-native-access=ALL-UNNAMED bench/container/MountBench.java [iterations]
import static java.lang.foreign.ValueLayout.*;
import java.lang.foreign.*;
import java.lang.invoke.*;
import java.nio.file.*;
import java.util.*;

/** See the comment at the top. */
public class MountBench {
    static final Linker L = Linker.nativeLinker();
    static final StructLayout CS = Linker.Option.captureStateLayout();
    static final VarHandle ERRNO = CS.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    static MethodHandle h(String n, FunctionDescriptor d, Linker.Option... o) {
        return L.downcallHandle(L.defaultLookup().find(n).orElseThrow(), d, o);
    }
    static final MethodHandle MOUNT = h("mount", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS), Linker.Option.captureCallState("errno"));
    static final MethodHandle UMOUNT2 = h("umount2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), Linker.Option.captureCallState("errno"));
    static final MethodHandle OPEN = h("open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), Linker.Option.captureCallState("errno"));
    static final MethodHandle CLOSE = h("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    static final MethodHandle IOCTL_INT = h("ioctl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG), Linker.Option.captureCallState("errno"));
    static final MethodHandle IOCTL_PTR = h("ioctl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS), Linker.Option.firstVariadicArg(2), Linker.Option.captureCallState("errno"));

    static void check(int r, MemorySegment st, String what) {
        if (r < 0) throw new IllegalStateException(what + " errno " + (int) ERRNO.get(st, 0L));
    }
    static void ffmOverlay(String opts, Path target) throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = a.allocate(CS);
            int r = (int) MOUNT.invokeExact(st, a.allocateFrom("overlay"), a.allocateFrom(target.toString()), a.allocateFrom("overlay"), 0L, (MemorySegment) a.allocateFrom(opts));
            check(r, st, "mount overlay");
        }
    }
    static void ffmLoop(Path image, Path target) throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = a.allocate(CS);
            int ctl = (int) OPEN.invokeExact(st, a.allocateFrom("/dev/loop-control"), 02 | 02000000);
            check(ctl, st, "open loop-control");
            int img = (int) OPEN.invokeExact(st, a.allocateFrom(image.toString()), 02 | 02000000);
            check(img, st, "open image");
            try {
                while (true) {
                    int n = (int) IOCTL_INT.invokeExact(st, ctl, 0x4C82L);
                    check(n, st, "LOOP_CTL_GET_FREE");
                    String dev = "/dev/loop" + n;
                    int loop = (int) OPEN.invokeExact(st, a.allocateFrom(dev), 02 | 02000000);
                    check(loop, st, "open " + dev);
                    try {
                        MemorySegment config = a.allocate(304, 8);
                        config.set(JAVA_INT, 0, img);
                        config.set(JAVA_INT, 60, 4); // LO_FLAGS_AUTOCLEAR
                        int r = (int) IOCTL_PTR.invokeExact(st, loop, 0x4C0AL, config);
                        if (r < 0 && (int) ERRNO.get(st, 0L) == 16) continue; // EBUSY: taken meanwhile
                        check(r, st, "LOOP_CONFIGURE");
                        int m = (int) MOUNT.invokeExact(st, a.allocateFrom(dev), a.allocateFrom(target.toString()), a.allocateFrom("ext4"), 0L, (MemorySegment) a.allocateFrom("discard,noinit_itable"));
                        check(m, st, "mount " + dev);
                        return;
                    } finally {
                        int c = (int) CLOSE.invokeExact(loop);
                    }
                }
            } finally {
                int c1 = (int) CLOSE.invokeExact(img);
                int c2 = (int) CLOSE.invokeExact(ctl);
            }
        }
    }
    static void umount(Path target) throws Throwable {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = a.allocate(CS);
            int r = (int) UMOUNT2.invokeExact(st, a.allocateFrom(target.toString()), 0);
            check(r, st, "umount2");
        }
    }
    static void run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) throw new IllegalStateException(String.join(" ", cmd) + ": " + out);
    }
    /** utime+stime of this process and of its waited-for children, ms. */
    static long[] cpu() throws Exception {
        String s = Files.readString(Path.of("/proc/self/stat"));
        String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
        long tick = 10; // USER_HZ 100
        return new long[] {(Long.parseLong(f[11]) + Long.parseLong(f[12])) * tick, (Long.parseLong(f[13]) + Long.parseLong(f[14])) * tick};
    }
    public static void main(String[] args) throws Throwable {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        Path dir = Files.createTempDirectory(Path.of("/var/tmp"), "aenv-mount-bench-");
        Path lower = Files.createDirectories(dir.resolve("lower")), upper = Files.createDirectories(dir.resolve("upper")), work = Files.createDirectories(dir.resolve("work")), target = Files.createDirectories(dir.resolve("rootfs")), disk = Files.createDirectories(dir.resolve("disk"));
        Files.writeString(lower.resolve("f"), "x");
        Path image = dir.resolve("disk.img");
        try (var f = new java.io.RandomAccessFile(image.toFile(), "rw")) { f.setLength(10240L << 20); }
        run("mkfs.ext4", "-q", "-F", "-m", "0", "-O", "^has_journal", "-E", "lazy_itable_init=1,nodiscard", image.toString());
        String opts = "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work;
        for (int round = 0; round < 2; round++) { // round 0 warms up
            long[] c0 = cpu(); long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) { run("mount", "-t", "overlay", "overlay", "-o", opts, target.toString()); umount(target); }
            long[] c1 = cpu(); long t1 = System.nanoTime();
            for (int i = 0; i < n; i++) { ffmOverlay(opts, target); umount(target); }
            long[] c2 = cpu(); long t2 = System.nanoTime();
            for (int i = 0; i < n; i++) { run("mount", "-t", "ext4", "-o", "loop,noinit_itable,discard", image.toString(), disk.toString()); umount(disk); }
            long[] c3 = cpu(); long t3 = System.nanoTime();
            for (int i = 0; i < n; i++) { ffmLoop(image, disk); umount(disk); }
            long[] c4 = cpu(); long t4 = System.nanoTime();
            if (round == 1) {
                System.out.printf("n=%d, per mount+umount2: wall ms / CPU ms (server JVM + children)%n", n);
                System.out.printf("overlay: mount(8) %.2f / %.2f+%.2f   mount(2) FFM %.2f / %.2f+%.2f%n", (t1 - t0) / 1e6 / n, (c1[0] - c0[0]) / (double) n, (c1[1] - c0[1]) / (double) n, (t2 - t1) / 1e6 / n, (c2[0] - c1[0]) / (double) n, (c2[1] - c1[1]) / (double) n);
                System.out.printf("loop ext4: mount(8) %.2f / %.2f+%.2f   ioctl+mount(2) FFM %.2f / %.2f+%.2f%n", (t3 - t2) / 1e6 / n, (c3[0] - c2[0]) / (double) n, (c3[1] - c2[1]) / (double) n, (t4 - t3) / 1e6 / n, (c4[0] - c3[0]) / (double) n, (c4[1] - c3[1]) / (double) n);
            }
        }
        Thread.sleep(200);
        String loops = new String(new ProcessBuilder("sh", "-c", "losetup -a | grep -c " + image + " || true").start().getInputStream().readAllBytes()).trim();
        System.out.println("loop devices still attached to the image: " + loops);
        run("rm", "-rf", dir.toString());
    }
}
