package io.agentenv.backend.container;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.BackendContext;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The container backend's settings, read once from {@link BackendContext#settings()} (the server passes every
 * {@code AENV_BACKEND_<KEY>} as {@code <key>}). Every key, its default and meaning is listed in docs/architecture.md
 * ("Container backend settings"); an unknown key is an error, so a typo never silently falls back to a default.
 *
 * @param hostEnv        the host setup's facts ({@code host_env}, default /var/cache/agentenv/host.env)
 * @param envdDir        envd's distribution: agentenv-envd.jar, lib/, jvm.options, envd.aot ({@code envd_dir},
 *                       default {@code agentenv-envd/target} under the working directory)
 * @param jdkHome        the JDK envd runs on, bound read-only at its own path ({@code jdk_home}, default the Temurin 25
 *                       install)
 * @param cpuCount       CPUs of every sandbox (quota) ({@code cpu_count}, default 2)
 * @param memoryMiB      memory limit without swap ({@code memory_mb}, default 512)
 * @param pids           tasks limit ({@code pids_limit}, default 1024)
 * @param maxSandboxes   network slots, so running sandboxes at most ({@code max_sandboxes}, default 1024)
 * @param warmSlots      network namespaces kept created ahead ({@code warm_slots}, default 4)
 * @param poolSize       ready sandboxes kept restored per template, 0 disables the warm pool ({@code pool_size},
 *                       default 2)
 * @param privileges     {@code no_new_privileges=true} enforces no_new_privs (then {@code sudo} fails); default false
 * @param idPrefix       prefix of container ids, cgroups and dirs of this backend ({@code id_prefix}, default empty;
 *                       tests use their lane's)
 * @param criuTimeout    deadline of one checkpoint or restore ({@code criu_timeout_s}, default 120 s)
 */
record ContainerSettings(
        Path hostEnv,
        Path envdDir,
        Path jdkHome,
        int cpuCount,
        int memoryMiB,
        int pids,
        int maxSandboxes,
        int warmSlots,
        int poolSize,
        ContainerSpec.Privileges privileges,
        String idPrefix,
        Duration criuTimeout) {

    static final Set<String> KEYS = Set.of("host_env", "envd_dir", "jdk_home", "cpu_count", "memory_mb", "pids_limit",
            "max_sandboxes", "warm_slots", "pool_size", "no_new_privileges", "id_prefix", "criu_timeout_s");

    ContainerSettings {
        requireNonNull(hostEnv, "hostEnv is null");
        requireNonNull(envdDir, "envdDir is null");
        requireNonNull(jdkHome, "jdkHome is null");
        requireNonNull(privileges, "privileges is null");
        requireNonNull(idPrefix, "idPrefix is null");
        requireNonNull(criuTimeout, "criuTimeout is null");
        if (!hostEnv.isAbsolute() || !envdDir.isAbsolute() || !jdkHome.isAbsolute()) {
            throw new IllegalArgumentException("host_env, envd_dir and jdk_home must be absolute paths");
        }
        range("cpu_count", cpuCount, 1, 64);
        range("memory_mb", memoryMiB, 64, 1 << 20);
        range("pids_limit", pids, 64, 1 << 22);
        range("max_sandboxes", maxSandboxes, 1, 8192);
        range("warm_slots", warmSlots, 0, maxSandboxes);
        range("pool_size", poolSize, 0, 32);
        if (!idPrefix.matches("([a-z0-9][a-z0-9-]{0,30})?")) {
            throw new IllegalArgumentException("id_prefix must be up to 31 lowercase letters, digits or '-': " + idPrefix);
        }
    }

    /** Reads and checks the settings; the message names the key at fault. */
    static ContainerSettings from(Map<String, String> settings, Path workingDir) {
        for (String key : settings.keySet()) {
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException("unknown container backend setting AENV_BACKEND_"
                        + key.toUpperCase(Locale.ROOT) + " (known: " + String.join(", ", KEYS.stream().sorted().toList()) + ")");
            }
        }
        return new ContainerSettings(
                path(settings, "host_env", HostLayout.DEFAULT_HOST_ENV, workingDir),
                path(settings, "envd_dir", workingDir.resolve("agentenv-envd/target"), workingDir),
                path(settings, "jdk_home", Path.of("/usr/lib/jvm/temurin-25-jdk-amd64"), workingDir),
                number(settings, "cpu_count", 2),
                number(settings, "memory_mb", 512),
                number(settings, "pids_limit", 1024),
                number(settings, "max_sandboxes", 1024),
                number(settings, "warm_slots", 4),
                number(settings, "pool_size", 2),
                bool(settings, "no_new_privileges") ? ContainerSpec.Privileges.NO_NEW_PRIVILEGES
                        : ContainerSpec.Privileges.ALLOW_SETUID,
                Optional.ofNullable(settings.get("id_prefix")).orElse(""),
                Duration.ofSeconds(number(settings, "criu_timeout_s", 120)));
    }

    ContainerSettings withPoolSize(int size) {
        return new ContainerSettings(hostEnv, envdDir, jdkHome, cpuCount, memoryMiB, pids, maxSandboxes, warmSlots, size,
                privileges, idPrefix, criuTimeout);
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
            throw new IllegalArgumentException("AENV_BACKEND_" + key.toUpperCase(Locale.ROOT) + " must be a whole number: '" + value + "'", e);
        }
    }

    private static boolean bool(Map<String, String> settings, String key) {
        String value = settings.getOrDefault(key, "false").strip().toLowerCase(Locale.ROOT);
        return switch (value) {
            case "true", "1", "yes" -> true;
            case "false", "0", "no", "" -> false;
            default -> throw new IllegalArgumentException("AENV_BACKEND_" + key.toUpperCase(Locale.ROOT) + " must be true or false: '" + value + "'");
        };
    }

    private static void range(String key, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException("AENV_BACKEND_" + key.toUpperCase(Locale.ROOT) + " must be " + min + ".." + max + ": " + value);
        }
    }
}
