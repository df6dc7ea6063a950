package io.agentenv.envd.metrics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Finds this process's own cgroup under the cgroup mount ({@code /sys/fs/cgroup}) from the lines of
 * {@code /proc/self/cgroup}: {@code 0::/path} for cgroup v2, {@code N:memory:/path} and {@code N:cpu,cpuacct:/path}
 * for v1 (whose controllers are mounted at {@code <root>/<controllers>} or {@code <root>/<controller>}).
 *
 * <p>The path in {@code /proc/self/cgroup} is relative to the hierarchy's root on the host, while a container's mount
 * may show only its own cgroup (runc bind-mounts each v1 controller's cgroup dir; a cgroup namespace or a CRIU restore
 * into a new cgroup does the same for v2). So the path is tried whole, then with leading segments dropped, down to
 * the mount itself; the first directory holding the controller's file wins. A hierarchy's root is the whole host and
 * is never taken (the caller then reads {@code /proc}). Nothing outside the mount is read.
 */
final class OwnCgroups {
    private OwnCgroups() {}

    private record Line(String hierarchy, List<String> controllers, String path) {}

    /**
     * @param proc where procfs is mounted
     * @param cgroupRoot where the cgroup filesystems are mounted
     * @return the cgroup v2 directory when there is one of this process's own; else the v1 memory and cpuacct
     *     directories when either is found; else empty
     */
    static Optional<OwnCgroup> find(Path proc, Path cgroupRoot) {
        List<Line> lines = new ArrayList<>();
        try {
            for (String text : Files.readAllLines(proc.resolve("self/cgroup"))) {
                String[] f = text.split(":", 3);
                if (f.length == 3) {
                    lines.add(new Line(f[0], f[1].isEmpty() ? List.of() : List.of(f[1].split(",")), f[2]));
                }
            }
        } catch (IOException e) {
            return Optional.empty(); // no procfs view: the caller falls back to what it can read
        }
        Path root = cgroupRoot.normalize();
        for (Line line : lines) {
            if (line.hierarchy().equals("0") && line.controllers().isEmpty()) {
                Optional<Path> dir = resolve(root, line.path(), "cgroup.procs")
                        .filter(d -> !d.equals(root) || Files.exists(d.resolve("cgroup.events"))); // only non-root ones have it
                if (dir.isPresent()) {
                    return Optional.of(new CgroupV2(dir.get()));
                }
            }
        }
        Optional<Path> memory = v1(lines, root, "memory", "memory.usage_in_bytes");
        Optional<Path> cpuacct = v1(lines, root, "cpuacct", "cpuacct.usage");
        if (memory.isEmpty() && cpuacct.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new CgroupV1(memory, cpuacct));
    }

    /** The directory of {@code controller}'s v1 cgroup, unless that is the hierarchy's root (the host). */
    private static Optional<Path> v1(List<Line> lines, Path root, String controller, String file) {
        for (Line line : lines) {
            if (line.hierarchy().equals("0") || !line.controllers().contains(controller)) {
                continue;
            }
            Set<String> mountNames = new LinkedHashSet<>();
            mountNames.add(String.join(",", line.controllers()));
            mountNames.add(controller);
            for (String name : mountNames) {
                Path mount = root.resolve(name).normalize();
                if (!root.equals(mount.getParent()) || !Files.isDirectory(mount)) {
                    continue;
                }
                Optional<Path> dir = resolve(mount, line.path(), file)
                        .filter(d -> !Files.exists(d.resolve("release_agent"))); // only a hierarchy's root has it
                if (dir.isPresent()) {
                    return dir;
                }
            }
        }
        return Optional.empty();
    }

    /**
     * {@code path} under {@code mount}, whole or with leading segments dropped, whichever first holds {@code file};
     * empty for a path with {@code .} or {@code ..} segments.
     */
    private static Optional<Path> resolve(Path mount, String path, String file) {
        List<String> segments = new ArrayList<>();
        for (String segment : path.split("/")) {
            if (segment.equals(".") || segment.equals("..")) {
                return Optional.empty();
            }
            if (!segment.isEmpty()) {
                segments.add(segment);
            }
        }
        for (int skip = 0; skip <= segments.size(); skip++) {
            Path dir = mount;
            for (String segment : segments.subList(skip, segments.size())) {
                dir = dir.resolve(segment);
            }
            dir = dir.normalize();
            if (dir.startsWith(mount) && Files.isRegularFile(dir.resolve(file))) {
                return Optional.of(dir);
            }
        }
        return Optional.empty();
    }
}
