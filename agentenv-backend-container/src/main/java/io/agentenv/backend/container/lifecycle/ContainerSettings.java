package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.guest.LxcfsViews;
import io.agentenv.backend.container.host.GuestIds;
import io.agentenv.backend.container.host.HostLayout;
import io.agentenv.backend.container.runtime.ContainerSpec;
import io.agentenv.backend.container.storage.SandboxDisks;
import io.agentenv.backend.container.storage.SpareDisks;
import io.agentenv.spi.BackendContext;
import io.agentenv.spi.Resources;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The container backend's settings, read once from {@link BackendContext#settings()} (the server passes every
 * {@code AENV_BACKEND_<KEY>} as {@code <key>}). Every key, its default and meaning is listed in docs/container-backend.md
 * ("Settings"); an unknown key is an error, so a typo never silently falls back to a default.
 *
 * @param hostEnv        the host setup's facts ({@code host_env}, default /var/cache/agentenv/host.env)
 * @param lxcfsDir       the LXCFS mount whose /proc and /sys files every sandbox sees ({@code lxcfs_dir}, default the
 *                       host setup's {@link LxcfsViews#HOST_DIR}; tests run their own daemon)
 * @param envdDir        envd's distribution: agentenv-envd.jar (dependencies inside), jvm.options, envd.aot ({@code envd_dir},
 *                       default {@code agentenv-envd/target} under the working directory)
 * @param jdkHome        the JDK envd runs on, bound read-only at its own path ({@code jdk_home}, default the Temurin 25
 *                       install)
 * @param cpuCount       CPUs of every sandbox (quota) ({@code cpu_count}, default 2)
 * @param memoryMiB      memory limit without swap ({@code memory_mb}, default 512)
 * @param diskMiB        size of every sandbox's own disk, which holds what it writes ({@code disk_mb}, default 10240;
 *                       E2B's rule: at least 1024 and a multiple of 1024); see {@link SandboxDisks}
 * @param pids           tasks limit ({@code pids_limit}, default 1024)
 * @param maxSandboxes   network slots, so running sandboxes at most ({@code max_sandboxes}, default 1024)
 * @param poolSize       ready sandboxes kept restored per template, 0 disables the warm pool ({@code pool_size},
 *                       default 2)
 * @param poolMax        the most ready sandboxes recent demand may grow the warm pool to, all templates together
 *                       ({@code pool_max}; default: 1/16 of the host's memory at {@value #MEMBER_ESTIMATE_MIB} MiB a
 *                       member, at least {@code pool_size}, at most half the slots); {@code pool_size} disables growth
 * @param spareDisks     formatted empty disk images kept ready per disk size, so a new disk is a rename instead of a
 *                       {@code mkfs}; 0 makes every disk when needed ({@code spare_disks}, default 4); see
 *                       {@link SpareDisks}
 * @param privileges     {@code no_new_privileges=true} enforces no_new_privs (then {@code sudo} fails); default false
 * @param idPrefix       prefix of container ids, cgroups and dirs of this backend ({@code id_prefix}, default empty;
 *                       tests use their lane's)
 * @param criuTimeout    deadline of one checkpoint or restore ({@code criu_timeout_s}, default 120 s)
 * @param guestIds       the host ids every sandbox's user namespace maps its ids 0-65535 onto ({@code guest_id_start},
 *                       default {@value #DEFAULT_GUEST_ID_START}: root in a sandbox is that unprivileged host id)
 * @param isolation      a second instance on one host (tests while a server runs): its own netns/veth name prefix
 *                       ({@code name_prefix}, extending the host's), runc state dir ({@code run_dir}), cgroup parent
 *                       ({@code cgroup_parent}) and first network slot ({@code first_slot}); empty = the host's
 */
public record ContainerSettings(
        Path hostEnv,
        Path lxcfsDir,
        Path envdDir,
        Path jdkHome,
        int cpuCount,
        int memoryMiB,
        int diskMiB,
        int pids,
        int maxSandboxes,
        int poolSize,
        int poolMax,
        int spareDisks,
        ContainerSpec.Privileges privileges,
        String idPrefix,
        Duration criuTimeout,
        GuestIds guestIds,
        Optional<Isolation> isolation) {

    /** Names and slots apart from the host's defaults, so that two instances never see each other's resources. */
    public record Isolation(String namePrefix, Path runDir, String cgroupParent, int firstSlot) {
        public Isolation {
            requireNonNull(namePrefix, "namePrefix is null");
            requireNonNull(runDir, "runDir is null");
            requireNonNull(cgroupParent, "cgroupParent is null");
            if (firstSlot < 0) {
                throw new IllegalArgumentException("AENV_BACKEND_FIRST_SLOT must be >= 0: " + firstSlot);
            }
        }
    }

    /** Where sandboxes' ids start on the host when {@code guest_id_start} is not set: far above any account's. */
    static final int DEFAULT_GUEST_ID_START = 1_000_000_000;
    /** Ids mapped per sandbox: 0-65535, what images use (nobody is 65534). */
    static final int GUEST_ID_COUNT = 65536;

    /** Every sandbox's disk when {@code disk_mb} is not set: 10 GiB (sparse; E2B-like). */
    static final int DEFAULT_DISK_MIB = 10240;

    /** Spare disk images per size when {@code spare_disks} is not set: enough for a few creates or forks in a row. */
    public static final int DEFAULT_SPARE_DISKS = 4;

    /**
     * What one idle warm-pool member is taken to cost in host memory when {@code pool_max} is derived from the host's:
     * a little above the ~33 MiB private measured per idle member (bench/container/pool-idle.mjs).
     */
    static final int MEMBER_ESTIMATE_MIB = 40;

    static final Set<String> KEYS = Set.of(
            "host_env",
            "lxcfs_dir",
            "envd_dir",
            "jdk_home",
            "cpu_count",
            "memory_mb",
            "disk_mb",
            "pids_limit",
            "max_sandboxes",
            "pool_size",
            "pool_max",
            "spare_disks",
            "no_new_privileges",
            "id_prefix",
            "criu_timeout_s",
            "name_prefix",
            "run_dir",
            "cgroup_parent",
            "first_slot",
            "guest_id_start");

    public ContainerSettings {
        requireNonNull(hostEnv, "hostEnv is null");
        requireNonNull(lxcfsDir, "lxcfsDir is null");
        requireNonNull(envdDir, "envdDir is null");
        requireNonNull(jdkHome, "jdkHome is null");
        requireNonNull(privileges, "privileges is null");
        requireNonNull(idPrefix, "idPrefix is null");
        requireNonNull(criuTimeout, "criuTimeout is null");
        requireNonNull(isolation, "isolation is null");
        requireNonNull(guestIds, "guestIds is null");
        if (!hostEnv.isAbsolute() || !lxcfsDir.isAbsolute() || !envdDir.isAbsolute() || !jdkHome.isAbsolute()) {
            throw new IllegalArgumentException("host_env, lxcfs_dir, envd_dir and jdk_home must be absolute paths");
        }
        range("cpu_count", cpuCount, 1, 64);
        range("memory_mb", memoryMiB, 64, 1 << 20);
        try {
            SandboxDisks.checkSize(diskMiB);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("AENV_BACKEND_DISK_MB: " + e.getMessage(), e);
        }
        range("pids_limit", pids, 64, 1 << 22);
        range("max_sandboxes", maxSandboxes, 1, 8192);
        range("pool_size", poolSize, 0, 32);
        range("pool_max", poolMax, poolSize, Math.max(poolSize, maxSandboxes));
        range("spare_disks", spareDisks, 0, 64);
        if (!idPrefix.matches("([a-z0-9][a-z0-9-]{0,30})?")) {
            throw new IllegalArgumentException(
                    "id_prefix must be up to 31 lowercase letters, digits or '-': " + idPrefix);
        }
    }

    /** What a new sandbox of a template gets: the CPU and memory its cgroup enforces and the size of its own disk. */
    public Resources resources() {
        return new Resources(cpuCount, memoryMiB, diskMiB);
    }

    /** Reads and checks the settings; the message names the key at fault. */
    public static ContainerSettings from(Map<String, String> settings, Path workingDir) {
        for (String key : settings.keySet()) {
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException(
                        "unknown container backend setting AENV_BACKEND_" + key.toUpperCase(Locale.ROOT) + " (known: "
                                + String.join(", ", KEYS.stream().sorted().toList()) + ")");
            }
        }
        return new ContainerSettings(
                path(settings, "host_env", HostLayout.DEFAULT_HOST_ENV, workingDir),
                path(settings, "lxcfs_dir", LxcfsViews.HOST_DIR, workingDir),
                path(settings, "envd_dir", workingDir.resolve("agentenv-envd/target"), workingDir),
                path(settings, "jdk_home", Path.of("/usr/lib/jvm/temurin-25-jdk-amd64"), workingDir),
                number(settings, "cpu_count", 2),
                number(settings, "memory_mb", 512),
                number(settings, "disk_mb", DEFAULT_DISK_MIB),
                number(settings, "pids_limit", 1024),
                number(settings, "max_sandboxes", 1024),
                number(settings, "pool_size", 2),
                poolMax(settings),
                number(settings, "spare_disks", DEFAULT_SPARE_DISKS),
                bool(settings, "no_new_privileges")
                        ? ContainerSpec.Privileges.NO_NEW_PRIVILEGES
                        : ContainerSpec.Privileges.ALLOW_SETUID,
                Optional.ofNullable(settings.get("id_prefix")).orElse(""),
                Duration.ofSeconds(number(settings, "criu_timeout_s", 120)),
                guestIds(settings),
                isolation(settings, workingDir));
    }

    /** {@code pool_max}, or what 1/16 of the host's memory holds (at least {@code pool_size}, at most half the slots). */
    private static int poolMax(Map<String, String> settings) {
        int poolSize = number(settings, "pool_size", 2);
        if (settings.containsKey("pool_max")) {
            return number(settings, "pool_max", poolSize);
        }
        var os = (com.sun.management.OperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long budgetMiB = os.getTotalMemorySize() / (1024 * 1024) / 16;
        int slots = number(settings, "max_sandboxes", 1024);
        return (int) Math.max(poolSize, Math.min(slots / 2, budgetMiB / MEMBER_ESTIMATE_MIB));
    }

    private static GuestIds guestIds(Map<String, String> settings) {
        int start = number(settings, "guest_id_start", DEFAULT_GUEST_ID_START);
        if (start < 65536 || (long) start + GUEST_ID_COUNT > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("AENV_BACKEND_GUEST_ID_START must be from 65536 to "
                    + (Integer.MAX_VALUE - GUEST_ID_COUNT) + ": " + start);
        }
        return new GuestIds(start, GUEST_ID_COUNT);
    }

    private static Optional<Isolation> isolation(Map<String, String> settings, Path workingDir) {
        List<String> keys = List.of("name_prefix", "run_dir", "cgroup_parent");
        long given = keys.stream()
                .filter(k -> settings.get(k) != null && !settings.get(k).isBlank())
                .count();
        if (given == 0) {
            if (settings.containsKey("first_slot")) {
                throw new IllegalArgumentException(
                        "AENV_BACKEND_FIRST_SLOT needs AENV_BACKEND_NAME_PREFIX, _RUN_DIR and _CGROUP_PARENT");
            }
            return Optional.empty();
        }
        if (given != keys.size()) {
            throw new IllegalArgumentException("AENV_BACKEND_NAME_PREFIX, _RUN_DIR and _CGROUP_PARENT go together");
        }
        return Optional.of(new Isolation(
                settings.get("name_prefix").strip(),
                path(settings, "run_dir", Path.of("/run/agentenv"), workingDir),
                settings.get("cgroup_parent").strip(),
                number(settings, "first_slot", 0)));
    }

    private static Path path(Map<String, String> settings, String key, Path fallback, Path workingDir) {
        String value = settings.get(key);
        if (value == null || value.isBlank()) {
            return fallback.toAbsolutePath().normalize();
        }
        return workingDir.resolve(value.strip()).toAbsolutePath().normalize();
    }

    private static int number(Map<String, String> settings, String key, int fallback) {
        String value = settings.get(key);
        if (value == null || value.isBlank()) {
            return fallback;
        }
        try {
            return Integer.parseInt(value.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "AENV_BACKEND_" + key.toUpperCase(Locale.ROOT) + " must be a whole number: '" + value + "'", e);
        }
    }

    private static boolean bool(Map<String, String> settings, String key) {
        String value = settings.getOrDefault(key, "false").strip().toLowerCase(Locale.ROOT);
        return switch (value) {
            case "true", "1", "yes" -> true;
            case "false", "0", "no", "" -> false;
            default ->
                throw new IllegalArgumentException(
                        "AENV_BACKEND_" + key.toUpperCase(Locale.ROOT) + " must be true or false: '" + value + "'");
        };
    }

    private static void range(String key, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(
                    "AENV_BACKEND_" + key.toUpperCase(Locale.ROOT) + " must be " + min + ".." + max + ": " + value);
        }
    }
}
