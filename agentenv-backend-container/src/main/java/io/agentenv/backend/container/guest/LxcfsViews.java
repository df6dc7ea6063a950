package io.agentenv.backend.container.guest;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.MountTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The files of the host's LXCFS mount that every sandbox sees over its own {@code /proc} and {@code /sys} paths, so
 * that {@code free}, {@code top}, {@code nproc}-like counts and runtimes that size themselves from them see the
 * sandbox's memory limit, CPUs, load and uptime instead of the host's. LXCFS answers each read for the cgroup of the
 * process that reads (the FUSE request names its host pid), so one read-only bind per file, the same for every
 * sandbox, shows each sandbox its own values; a sandbox restored into another cgroup (a fork child, a resume, a warm
 * member) reads that cgroup's. The host setup runs the daemon ({@code scripts/lib/host/lxcfs.sh}) with its CFS-quota
 * CPU view and its load averages on.
 *
 * <p>The binds are plain OCI config mounts: runc 1.1 allows exactly these {@code /proc} files as mount targets (its
 * {@code checkProcMount} list of LXCFS's files), and CRIU takes every config bind as an external mount, so a checkpoint
 * never dumps the FUSE mount itself and every restore binds the current LXCFS files again.
 *
 * @param dir where the host's LXCFS daemon is mounted
 */
public record LxcfsViews(Path dir) {

    /** Where the host setup mounts LXCFS. */
    public static final Path HOST_DIR = Path.of("/run/agentenv/lxcfs");

    /**
     * The paths inside a sandbox that show LXCFS's view, each bound from the same path below {@link #dir}.
     * {@code /proc/slabinfo} is left out: it is root-only on the host and LXCFS shows only the host's. The CPU list
     * in {@code /sys/devices/system/cpu/online} is what glibc counts for {@code sysconf(_SC_NPROCESSORS_ONLN)}
     * (Python's {@code os.cpu_count()}, many thread pools).
     */
    public static final List<String> GUEST_PATHS = List.of(
            "/proc/cpuinfo",
            "/proc/diskstats",
            "/proc/loadavg",
            "/proc/meminfo",
            "/proc/stat",
            "/proc/swaps",
            "/proc/uptime",
            "/sys/devices/system/cpu/online");

    private static final String FS_TYPE = "fuse.lxcfs";

    public LxcfsViews {
        requireNonNull(dir, "dir is null");
        if (!dir.isAbsolute()) {
            throw new IllegalArgumentException("dir must be absolute: " + dir);
        }
    }

    /** One view: the LXCFS file bound read-only at {@code guestPath}. */
    public record Bind(Path hostPath, String guestPath) {
        public Bind {
            requireNonNull(hostPath, "hostPath is null");
            requireNonNull(guestPath, "guestPath is null");
        }
    }

    /** LXCFS's daemon is gone: its mount is missing, or left behind unanswered. */
    public static final class UnavailableException extends IOException {
        UnavailableException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The binds of every path in {@link #GUEST_PATHS}, in that order. */
    public List<Bind> binds() {
        return GUEST_PATHS.stream()
                .map(guest -> new Bind(dir.resolve(guest.substring(1)), guest))
                .toList();
    }

    /**
     * Throws when a launch would fail to bind the views: one open of a file through the mount (one FUSE round trip,
     * nothing read), which fails with ENOTCONN once the daemon has died and with ENOENT once its mount is gone. Not a
     * stat: the kernel answers that from its attribute cache for up to LXCFS's attribute timeout after a death.
     */
    public void requireServing() throws UnavailableException {
        Path probe = dir.resolve("proc/uptime");
        try (var opened = Files.newByteChannel(probe)) {
            // opened and closed
        } catch (IOException e) {
            throw new UnavailableException(
                    "LXCFS does not answer at " + dir + " (" + e.getMessage() + "): its daemon is gone; start it again"
                            + " with scripts/setup-host.sh as root (sandboxes that run keep failing views until a"
                            + " pause and resume)",
                    e);
        }
    }

    /**
     * Why sandboxes cannot get these views now, or empty when they can: {@link #dir} must be an LXCFS mount whose
     * daemon answers. A daemon that died leaves its mount behind, and every read of it (and runc's bind of it at a
     * create) then fails with ENOTCONN, "Transport endpoint is not connected".
     */
    public Optional<String> unavailableReason() {
        try {
            boolean mounted = MountTable.entries().stream()
                    .anyMatch(m -> m.fsType().equals(FS_TYPE)
                            && Path.of(m.mountPoint()).equals(dir));
            if (!mounted) {
                return Optional.of("LXCFS is not mounted at " + dir);
            }
        } catch (IOException e) {
            return Optional.of("cannot read the mount table: " + e.getMessage());
        }
        for (Bind bind : binds()) {
            try {
                Files.readAllBytes(bind.hostPath()); // a dead daemon's mount fails here, and so would runc's bind
            } catch (IOException e) {
                return Optional.of("LXCFS at " + dir + " does not answer (" + bind.hostPath() + ": " + e.getMessage()
                        + "); its daemon is gone");
            }
        }
        return Optional.empty();
    }
}
