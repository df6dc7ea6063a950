package io.agentenv.backend.container.guest;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.HostLayout;
import io.agentenv.libc.Libc;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The two host directories every sandbox's {@code /dev} and {@code /sys/fs/cgroup} are bound from, read-only, instead
 * of the tmpfs mounts runc would make there. CRIU archives every tmpfs of a container with a {@code tar} process at
 * each dump and extracts it with another at each restore (~6 ms per mount on a quiet host, 20–45 ms loaded, for a few
 * KiB of device nodes and mount points); a bind mount is external to CRIU ({@code CriuDump}, and {@code runc restore}
 * maps it back by its destination), so neither is archived, and fork children and template restores bind the same
 * directory again.
 *
 * <ul>
 *   <li>{@code dev}: the device nodes runc would create (null, zero, full, random, urandom, tty: mode 0666, owned by
 *       root), its symlinks (fd, stdin, stdout, stderr, ptmx to the sandbox's own devpts) and the mount points of the
 *       per-sandbox mounts on top ({@code /dev/pts}, {@code /dev/shm}: a tmpfs of its own, still dumped when used,
 *       {@code /dev/mqueue}). Bound read-only without {@code nodev}: the sandbox cannot create, rename or change
 *       anything in it (and has no CAP_MKNOD), and its device cgroup allows only runc's default devices.</li>
 *   <li>{@code cgroup}: a mount point for every cgroup v1 hierarchy runc manages (and the host's symlinks to them,
 *       such as {@code cpu -> cpu,cpuacct}); each sandbox's own cgroup directories are bound read-only on those
 *       ({@code OciSpecs}), as runc's own v1 cgroup mount does, so programs inside (a JVM sizing its heap) see the
 *       sandbox's limits.</li>
 * </ul>
 *
 * Both are shared by all sandboxes (they are read-only inside and identical for every sandbox) and kept under the
 * host's cache dir, in a directory only root may enter; {@link #prepare} builds them once and checks them at every start of the backend, replacing a
 * directory that does not hold exactly what it should.
 *
 * @param dev the directory bound at {@code /dev}
 * @param cgroup the directory bound at {@code /sys/fs/cgroup}
 * @param cgroupRoot where the host mounts its cgroup v1 hierarchies
 * @param cgroupHierarchies the hierarchies (mount point names under {@code cgroupRoot}) whose sandbox cgroup is bound
 */
public record GuestMounts(Path dev, Path cgroup, Path cgroupRoot, List<String> cgroupHierarchies) {

    /** The character devices of runc's default set: name, major, minor. */
    static final List<Device> DEVICES = List.of(
            new Device("null", 1, 3),
            new Device("zero", 1, 5),
            new Device("full", 1, 7),
            new Device("random", 1, 8),
            new Device("urandom", 1, 9),
            new Device("tty", 5, 0));
    /** runc's /dev symlinks (ptmx into the sandbox's own devpts instance). */
    static final Map<String, String> DEV_LINKS = Map.of(
            "fd",
            "/proc/self/fd",
            "stdin",
            "/proc/self/fd/0",
            "stdout",
            "/proc/self/fd/1",
            "stderr",
            "/proc/self/fd/2",
            "ptmx",
            "pts/ptmx");
    /**
     * Mount points of the sandbox's own mounts inside /dev, and their modes. runc gives a tmpfs the mode of the
     * directory it is mounted on (it chmods the new root), so /dev/shm's must be 1777: every user may use it.
     */
    static final Map<String, String> DEV_MOUNT_POINTS =
            Map.of("pts", "rwxr-xr-x", "shm", "rwxrwxrwt", "mqueue", "rwxr-xr-x");
    /**
     * The controllers runc 1.1's cgroup v1 manager creates a container's cgroup in ({@code systemd}: the named
     * hierarchy name=systemd). A hierarchy with any other controller is not bound: runc would have bound the host's
     * own cgroup of it.
     */
    static final Set<String> RUNC_CONTROLLERS = Set.of(
            "cpuset",
            "devices",
            "memory",
            "cpu",
            "cpuacct",
            "pids",
            "blkio",
            "hugetlb",
            "net_cls",
            "net_prio",
            "perf_event",
            "freezer",
            "rdma",
            "systemd");

    /** The name {@link #prepare} moves a replaced directory aside to (its name and a random UUID). */
    static final Pattern MOVED_ASIDE = Pattern.compile("\\.(dev|cgroup)-stale-[0-9a-f-]{36}");

    private static final Logger log = LoggerFactory.getLogger(GuestMounts.class);
    private static final int S_IFMT = 0170000;
    private static final int S_IFCHR = 0020000;
    private static final MethodHandle MKNOD =
            Libc.function("mknod", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG));
    private static final MethodHandle CHMOD =
            Libc.function("chmod", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));

    public GuestMounts {
        requireNonNull(dev, "dev is null");
        requireNonNull(cgroup, "cgroup is null");
        requireNonNull(cgroupRoot, "cgroupRoot is null");
        cgroupHierarchies = List.copyOf(cgroupHierarchies);
        for (String name : cgroupHierarchies) {
            if (!name.matches("[a-z_,]+")) {
                throw new IllegalArgumentException("not a cgroup hierarchy name: " + name);
            }
        }
    }

    /** A character device node: its name in /dev and its numbers. */
    record Device(String name, int major, int minor) {
        Device {
            requireNonNull(name, "name is null");
            if (major < 0 || major > 0xfff || minor < 0 || minor > 0xff) {
                throw new IllegalArgumentException("device numbers out of range: " + major + ":" + minor);
            }
        }

        long rdev() {
            return ((long) major << 8) | minor; // glibc's makedev for numbers this small
        }
    }

    /** {@link #prepare(Path, Path)} in {@link #dir(HostLayout)}, for the host's cgroup hierarchies. */
    public static GuestMounts prepare(HostLayout layout) throws IOException {
        return prepare(dir(layout), layout.cgroupRoot());
    }

    /** Where the host keeps them: {@code guest-mounts} under its cache dir, shared by every backend on the host. */
    public static Path dir(HostLayout layout) {
        return layout.cacheDir().resolve("guest-mounts");
    }

    /**
     * Builds (or checks) both directories under {@code dir} for the cgroup hierarchies mounted at {@code cgroupRoot}.
     * Safe to run from several backends at once: each builds into a temporary directory and renames it into place, and
     * one that finds the place taken checks what is there.
     *
     * @throws IOException when they cannot be made, or device nodes do not work there (a filesystem mounted nodev)
     */
    public static GuestMounts prepare(Path dir, Path cgroupRoot) throws IOException {
        if (!Files.isDirectory(dir)) {
            // root only: /dev/shm's mount point is world-writable (see DEV_MOUNT_POINTS), and no host user has business
            // here; the sandboxes' root id is let through by an ACL entry (GuestPassage), which a chmod would mask
            Files.createDirectories(
                    dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
        Hierarchies hierarchies = Hierarchies.of(cgroupRoot);
        Path dev = dir.resolve("dev");
        Path cgroup = dir.resolve("cgroup");
        settle(dir, dev, GuestMounts::devProblem, GuestMounts::buildDev);
        settle(dir, cgroup, path -> cgroupProblem(path, hierarchies), path -> buildCgroup(path, hierarchies));
        try (OutputStream null0 = Files.newOutputStream(dev.resolve("null"))) {
            null0.write(0);
        } catch (IOException e) {
            throw new IOException(
                    "device nodes do not work in " + dev + " (is its filesystem mounted nodev?): " + e, e);
        }
        return new GuestMounts(dev, cgroup, cgroupRoot, hierarchies.dirs());
    }

    /** The cgroup v1 hierarchies bound into a sandbox and the host's symlinks to them. */
    record Hierarchies(List<String> dirs, Map<String, String> links) {
        Hierarchies {
            dirs = List.copyOf(dirs);
            links = Map.copyOf(links);
        }

        /** Reads {@code cgroupRoot}: v1 hierarchies (not cgroup2) of runc's controllers, and symlinks to them. */
        static Hierarchies of(Path cgroupRoot) throws IOException {
            TreeSet<String> dirs = new TreeSet<>();
            Map<String, String> links = new TreeMap<>();
            try (Stream<Path> entries = Files.list(cgroupRoot)) {
                for (Path entry : entries.toList()) {
                    String name = entry.getFileName().toString();
                    if (Files.isSymbolicLink(entry)) {
                        links.put(name, Files.readSymbolicLink(entry).toString());
                    } else if (Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS)
                            && !Files.exists(entry.resolve("cgroup.controllers"))
                            && Set.copyOf(List.of(name.split(","))).stream().allMatch(RUNC_CONTROLLERS::contains)) {
                        dirs.add(name);
                    }
                }
            }
            links.values().retainAll(dirs);
            return new Hierarchies(new ArrayList<>(dirs), links);
        }
    }

    /** What is wrong with {@code dir} for its purpose, or null when it is as {@link #prepare} builds it. */
    private interface Check {
        String problem(Path dir) throws IOException;
    }

    private interface Build {
        void build(Path dir) throws IOException;
    }

    /**
     * Leaves {@code target} as {@code build} makes it: kept when {@code check} finds nothing wrong, else built in a
     * temporary directory next to it and renamed into place (a wrong one is moved aside first and removed).
     */
    private static void settle(Path parent, Path target, Check check, Build build) throws IOException {
        if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS) && check.problem(target) == null) {
            return;
        }
        Path fresh = parent.resolve("." + target.getFileName() + "-" + UUID.randomUUID());
        try {
            Files.createDirectory(fresh);
            build.build(fresh);
            Files.setPosixFilePermissions(fresh, PosixFilePermissions.fromString("rwxr-xr-x"));
            String problem = Files.exists(target, LinkOption.NOFOLLOW_LINKS) ? check.problem(target) : null;
            if (problem != null) {
                // Moved aside, never emptied: running sandboxes (of this server or of one before a restart) have it
                // bound as their /dev or /sys/fs/cgroup, and deleting its entries would delete them there too.
                Path aside = parent.resolve("." + target.getFileName() + "-stale-" + UUID.randomUUID());
                Files.move(target, aside, StandardCopyOption.ATOMIC_MOVE);
                log.atWarn()
                        .addKeyValue("dir", target)
                        .addKeyValue("problem", problem)
                        .addKeyValue("moved_to", aside)
                        .log(
                                "guest mount source was not as built; replaced, the old one kept for sandboxes bound to it");
            }
            try {
                Files.move(fresh, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (FileAlreadyExistsException | DirectoryNotEmptyException raced) {
                // another backend put its own there meanwhile: that one must be right
            }
        } finally {
            FileTrees.deleteTree(fresh);
        }
        String problem = check.problem(target);
        if (problem != null) {
            throw new IOException(target + " is not as it should be after building it: " + problem);
        }
    }

    private static void buildDev(Path dir) throws IOException {
        for (Device device : DEVICES) {
            Path node = dir.resolve(device.name());
            mknod(node, S_IFCHR | 0666, device.rdev());
            Files.setPosixFilePermissions(
                    node, PosixFilePermissions.fromString("rw-rw-rw-")); // mknod applied the umask
        }
        for (Map.Entry<String, String> link : DEV_LINKS.entrySet()) {
            Files.createSymbolicLink(dir.resolve(link.getKey()), Path.of(link.getValue()));
        }
        for (Map.Entry<String, String> mountPoint : DEV_MOUNT_POINTS.entrySet()) {
            chmod(Files.createDirectory(dir.resolve(mountPoint.getKey())), mountPoint.getValue());
        }
    }

    private static String devProblem(Path dir) throws IOException {
        Set<String> expected = new TreeSet<>(DEV_LINKS.keySet());
        expected.addAll(DEV_MOUNT_POINTS.keySet());
        DEVICES.forEach(d -> expected.add(d.name()));
        String problem = ownedByRootAndClosed(dir, expected);
        if (problem != null) {
            return problem;
        }
        for (Device device : DEVICES) {
            Path node = dir.resolve(device.name());
            Map<String, Object> attrs = Files.readAttributes(node, "unix:mode,rdev,uid,gid", LinkOption.NOFOLLOW_LINKS);
            int mode = (Integer) attrs.get("mode");
            if ((mode & S_IFMT) != S_IFCHR
                    || (mode & 07777) != 0666
                    || (Long) attrs.get("rdev") != device.rdev()
                    || (Integer) attrs.get("uid") != 0
                    || (Integer) attrs.get("gid") != 0) {
                return node + " is not the character device " + device.major() + ":" + device.minor() + " (0666, root)";
            }
        }
        for (Map.Entry<String, String> link : DEV_LINKS.entrySet()) {
            Path path = dir.resolve(link.getKey());
            if (!Files.isSymbolicLink(path)
                    || !Files.readSymbolicLink(path).toString().equals(link.getValue())) {
                return path + " is not a symlink to " + link.getValue();
            }
        }
        for (Map.Entry<String, String> mountPoint : DEV_MOUNT_POINTS.entrySet()) {
            Path path = dir.resolve(mountPoint.getKey());
            if (ownedByRootAndClosed(path, Set.of(), mode(mountPoint.getValue())) != null) {
                return path + " is not an empty directory owned by root (" + mountPoint.getValue() + ")";
            }
        }
        return null;
    }

    private static void buildCgroup(Path dir, Hierarchies hierarchies) throws IOException {
        for (String name : hierarchies.dirs()) {
            Files.setPosixFilePermissions(
                    Files.createDirectory(dir.resolve(name)), PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        for (Map.Entry<String, String> link : hierarchies.links().entrySet()) {
            Files.createSymbolicLink(dir.resolve(link.getKey()), Path.of(link.getValue()));
        }
    }

    private static String cgroupProblem(Path dir, Hierarchies hierarchies) throws IOException {
        Set<String> expected = new TreeSet<>(hierarchies.dirs());
        expected.addAll(hierarchies.links().keySet());
        String problem = ownedByRootAndClosed(dir, expected);
        if (problem != null) {
            return problem;
        }
        for (String name : hierarchies.dirs()) {
            if (ownedByRootAndClosed(dir.resolve(name), Set.of()) != null) {
                return dir.resolve(name) + " is not an empty directory owned by root (0755)";
            }
        }
        for (Map.Entry<String, String> link : hierarchies.links().entrySet()) {
            Path path = dir.resolve(link.getKey());
            if (!Files.isSymbolicLink(path)
                    || !Files.readSymbolicLink(path).toString().equals(link.getValue())) {
                return path + " is not a symlink to " + link.getValue();
            }
        }
        return null;
    }

    /** Null when {@code dir} is a directory (no symlink) owned by root, mode 0755, holding exactly {@code names}. */
    private static String ownedByRootAndClosed(Path dir, Set<String> names) throws IOException {
        return ownedByRootAndClosed(dir, names, 0755);
    }

    private static String ownedByRootAndClosed(Path dir, Set<String> names, int wantedMode) throws IOException {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return dir + " is not a directory";
        }
        Map<String, Object> attrs = Files.readAttributes(dir, "unix:mode,uid,gid", LinkOption.NOFOLLOW_LINKS);
        if (((Integer) attrs.get("mode") & 07777) != wantedMode
                || (Integer) attrs.get("uid") != 0
                || (Integer) attrs.get("gid") != 0) {
            return dir + " is not owned by root with mode " + Integer.toOctalString(wantedMode);
        }
        Set<String> present = new TreeSet<>();
        try (Stream<Path> entries = Files.list(dir)) {
            entries.forEach(entry -> present.add(entry.getFileName().toString()));
        }
        return present.equals(names) ? null : dir + " holds " + present + ", not " + names;
    }

    /** {@code rwxrwxrwt}-style modes, the sticky bit included (which PosixFilePermissions cannot express). */
    static int mode(String symbolic) {
        if (!symbolic.matches("[r-][w-][x-][r-][w-][x-][r-][w-][xtT-]")) {
            throw new IllegalArgumentException("not a mode: " + symbolic);
        }
        int mode = 0;
        for (int i = 0; i < 9; i++) {
            char c = symbolic.charAt(i);
            if (c != '-' && c != 'T') {
                mode |= 1 << (8 - i);
            }
        }
        char last = symbolic.charAt(8);
        return last == 't' || last == 'T' ? mode | 01000 : mode;
    }

    private static void chmod(Path path, String symbolic) throws IOException {
        check(path, "chmod", call(CHMOD, path, mode(symbolic), 0));
    }

    private static void mknod(Path path, int mode, long rdev) throws IOException {
        check(path, "mknod", call(MKNOD, path, mode, rdev));
    }

    private static void check(Path path, String what, int errno) throws IOException {
        if (errno != 0) {
            throw new IOException(
                    what + "(" + path + ") failed: errno " + errno + (errno == 1 ? " (EPERM: not root)" : ""));
        }
    }

    /** Calls {@code handle} (mknod or chmod) on {@code path}; 0 or errno. */
    @SuppressWarnings("ReferenceEquality") // which of the two constant handles it was given
    private static int call(MethodHandle handle, Path path, int mode, long rdev) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment name = arena.allocateFrom(path.toString());
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            int result = handle == MKNOD
                    ? (int) MKNOD.invokeExact(state, name, mode, rdev)
                    : (int) CHMOD.invokeExact(state, name, mode);
            return result == 0 ? 0 : Libc.errno(state);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("call failed", e);
        }
    }
}
