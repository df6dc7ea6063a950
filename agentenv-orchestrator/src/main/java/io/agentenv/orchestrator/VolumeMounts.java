package io.agentenv.orchestrator;

import io.agentenv.spi.VolumeMount;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Checks the volume mounts a create asks for and resolves them to the volumes they name. A mount path must be absolute
 * and normalized; it may not be {@code /}, a system directory or a directory holding one (it would hide the system's
 * files), nor lie inside a directory the runtime provides ({@code /proc}, {@code /sys}, {@code /dev}, {@code /run},
 * {@code /etc}, where the guest agent and the JDK live); two mounts may not share a path or lie one inside the other.
 * Each failure is INVALID_ARGUMENT naming the mount.
 */
final class VolumeMounts {
    /** Directories a mount may be neither at nor above. */
    static final Set<String> SYSTEM_DIRS = Set.of(
            "/bin",
            "/boot",
            "/etc",
            "/home",
            "/lib",
            "/lib32",
            "/lib64",
            "/libx32",
            "/opt",
            "/root",
            "/sbin",
            "/srv",
            "/usr",
            "/usr/bin",
            "/usr/include",
            "/usr/lib",
            "/usr/lib64",
            "/usr/libexec",
            "/usr/local",
            "/usr/local/bin",
            "/usr/sbin",
            "/usr/share",
            "/var",
            "/var/lib",
            "/var/log",
            "/tmp");

    /** Directories a mount may not be at, above or inside: the runtime mounts them or puts its own files there. */
    static final Set<String> RUNTIME_DIRS =
            Set.of("/proc", "/sys", "/dev", "/run", "/etc", "/var/run", "/opt/agentenv-envd", "/usr/lib/jvm");

    /** At most this many mounts per sandbox. */
    static final int MAX_MOUNTS = 16;

    private VolumeMounts() {}

    /** The attachments {@code requested} asks for, each checked and its volume found. */
    static List<VolumeAttachment> resolve(List<VolumeMountRequest> requested, VolumeCatalog catalog) {
        check(requested);
        List<VolumeAttachment> attachments = new ArrayList<>(requested.size());
        for (VolumeMountRequest mount : requested) {
            VolumeCatalog.Volume volume = catalog.find(mount.volume())
                    .orElseThrow(() -> AgentEnvException.invalidArgument(
                            "volume " + TemplateCatalog.printable(mount.volume()) + " not found (volumeMounts)"));
            attachments.add(new VolumeAttachment(volume.id(), volume.name(), mount.path(), mount.readOnly()));
        }
        return List.copyOf(attachments);
    }

    /** The checks that need no volume: paths, overlaps, the count. */
    static void check(List<VolumeMountRequest> requested) {
        if (requested.size() > MAX_MOUNTS) {
            throw AgentEnvException.invalidArgument(
                    "at most " + MAX_MOUNTS + " volume mounts per sandbox, not " + requested.size());
        }
        List<String> seen = new ArrayList<>();
        for (VolumeMountRequest mount : requested) {
            String path = mount.path();
            String shown = TemplateCatalog.printable(path);
            if (mount.volume().isBlank()) {
                throw AgentEnvException.invalidArgument("volume mount at " + shown + " names no volume");
            }
            if (!VolumeMount.isNormalizedAbsolute(path)) {
                throw AgentEnvException.invalidArgument("volume mount path " + shown
                        + " must be absolute and normalized (no trailing '/', '.' or '..'), and not /");
            }
            for (String system : SYSTEM_DIRS) {
                if (path.equals(system) || system.startsWith(path + "/")) {
                    throw AgentEnvException.invalidArgument("volume mount path " + shown + " would hide the system"
                            + " directory " + system + "; mount it in a directory of its own (e.g. /data or "
                            + "/home/user/data)");
                }
            }
            for (String runtime : RUNTIME_DIRS) {
                if (path.equals(runtime) || path.startsWith(runtime + "/") || runtime.startsWith(path + "/")) {
                    throw AgentEnvException.invalidArgument("volume mount path " + shown + " is in " + runtime
                            + ", which the sandbox's runtime provides");
                }
            }
            for (String other : seen) {
                if (other.equals(path)) {
                    throw AgentEnvException.invalidArgument("two volume mounts at " + shown);
                }
                if (other.startsWith(path + "/") || path.startsWith(other + "/")) {
                    throw AgentEnvException.invalidArgument(
                            "volume mounts at " + shown + " and " + TemplateCatalog.printable(other) + " overlap");
                }
            }
            seen.add(path);
        }
    }
}
