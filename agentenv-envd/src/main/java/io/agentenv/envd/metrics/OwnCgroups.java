package io.agentenv.envd.metrics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Finds this process's own cgroup under the cgroup mount ({@code /sys/fs/cgroup}) from the lines of
 * {@code /proc/self/cgroup}: {@code 0::/path} for cgroup v2, {@code N:memory:/path} and {@code N:cpu,cpuacct:/path}
 * for v1 (whose controllers are mounted at {@code <root>/<controllers>} or {@code <root>/<controller>}).
 *
 * <p>The path in {@code /proc/self/cgroup} is relative to the hierarchy's root, while a mount may show only a part of
 * the hierarchy (runc bind-mounts a container's own v1 cgroup dirs; a cgroup namespace does the same for v2). The
 * root of each mount comes from {@code /proc/self/mountinfo}: the path is mapped below the mount when it lies under
 * that root, and the controller counts as unreadable when it does not (the mount then shows some other cgroup). Only
 * when mountinfo cannot be read is the path tried whole, then with leading segments dropped, down to the mount itself.
 * A hierarchy's root is the whole host and is never taken (the caller then reads {@code /proc}). Nothing outside the
 * mount is read.
 */
final class OwnCgroups {
    private OwnCgroups() {}

    private record Line(String hierarchy, List<String> controllers, String path) {}

    /** Each cgroup mount point and the hierarchy path it shows; empty when mountinfo cannot be read. */
    private record Mounts(Optional<Map<Path, String>> roots) {}

    /**
     * Finds this process's own cgroup directories.
     *
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
        Mounts mounts = mounts(proc);
        for (Line line : lines) {
            if (line.hierarchy().equals("0") && line.controllers().isEmpty()) {
                Optional<Path> dir = resolve(mounts, root, line.path(), "cgroup.procs")
                        .filter(d -> !d.equals(root)
                                || Files.exists(d.resolve("cgroup.events"))); // only non-root ones have it
                if (dir.isPresent()) {
                    return Optional.of(new CgroupV2(dir.get()));
                }
            }
        }
        Optional<Path> memory = v1(lines, mounts, root, "memory", "memory.usage_in_bytes");
        Optional<Path> cpuacct = v1(lines, mounts, root, "cpuacct", "cpuacct.usage");
        if (memory.isEmpty() && cpuacct.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new CgroupV1(memory, cpuacct));
    }

    /** The directory of {@code controller}'s v1 cgroup, unless that is the hierarchy's root (the host). */
    private static Optional<Path> v1(List<Line> lines, Mounts mounts, Path root, String controller, String file) {
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
                Optional<Path> dir = resolve(mounts, mount, line.path(), file)
                        .filter(d -> !Files.exists(d.resolve("release_agent"))); // only a hierarchy's root has it
                if (dir.isPresent()) {
                    return dir;
                }
            }
        }
        return Optional.empty();
    }

    /**
     * The cgroup mounts of {@code /proc/self/mountinfo}: {@code id parent dev root mountpoint options [tags] - type
     * source superoptions}, with spaces and backslashes escaped as octal.
     */
    private static Mounts mounts(Path proc) {
        List<String> lines;
        try {
            lines = Files.readAllLines(proc.resolve("self/mountinfo"));
        } catch (IOException e) {
            return new Mounts(Optional.empty());
        }
        Map<Path, String> roots = new HashMap<>();
        for (String line : lines) {
            String[] f = line.split(" ");
            int dash = List.of(f).indexOf("-");
            if (f.length < 5 || dash < 0 || dash + 1 >= f.length) {
                continue;
            }
            if (f[dash + 1].equals("cgroup") || f[dash + 1].equals("cgroup2")) {
                roots.put(Path.of(unescape(f[4])).normalize(), unescape(f[3]));
            }
        }
        return new Mounts(Optional.of(roots));
    }

    private static String unescape(String field) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            boolean octal = c == '\\'
                    && i + 3 < field.length()
                    && field.substring(i + 1, i + 4).chars().allMatch(d -> d >= '0' && d <= '7');
            if (octal) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /**
     * The directory of hierarchy path {@code path} below {@code mount}, if it holds {@code file}: mapped through the
     * mount's root when mountinfo knows the mount, else tried whole and then with leading segments dropped. Empty for a
     * path with {@code .} or {@code ..} segments and for a path the mount does not show.
     */
    private static Optional<Path> resolve(Mounts mounts, Path mount, String path, String file) {
        Optional<List<String>> segments = segments(path);
        if (segments.isEmpty()) {
            return Optional.empty();
        }
        if (mounts.roots().isPresent()) {
            Optional<String> mountRoot = mountRoot(mounts.roots().get(), mount);
            Optional<List<String>> rootSegments = mountRoot.flatMap(OwnCgroups::segments);
            if (rootSegments.isEmpty()) {
                return Optional.empty(); // not a cgroup mount, or one with a root outside this cgroup namespace
            }
            List<String> all = segments.get();
            List<String> prefix = rootSegments.get();
            if (all.size() < prefix.size() || !all.subList(0, prefix.size()).equals(prefix)) {
                return Optional.empty(); // the mount shows another part of the hierarchy
            }
            return existing(mount, all.subList(prefix.size(), all.size()), file);
        }
        for (int skip = 0; skip <= segments.get().size(); skip++) {
            Optional<Path> dir =
                    existing(mount, segments.get().subList(skip, segments.get().size()), file);
            if (dir.isPresent()) {
                return dir;
            }
        }
        return Optional.empty();
    }

    /** The root of the mount at {@code mount}, following symlinks such as {@code cpuacct -> cpu,cpuacct}. */
    private static Optional<String> mountRoot(Map<Path, String> roots, Path mount) {
        String root = roots.get(mount);
        if (root == null) {
            try {
                root = roots.get(mount.toRealPath());
            } catch (IOException e) {
                return Optional.empty();
            }
        }
        return Optional.ofNullable(root);
    }

    private static Optional<List<String>> segments(String path) {
        List<String> segments = new ArrayList<>();
        for (String segment : path.split("/")) {
            if (segment.equals(".") || segment.equals("..")) {
                return Optional.empty();
            }
            if (!segment.isEmpty()) {
                segments.add(segment);
            }
        }
        return Optional.of(segments);
    }

    private static Optional<Path> existing(Path mount, List<String> segments, String file) {
        Path dir = mount;
        for (String segment : segments) {
            dir = dir.resolve(segment);
        }
        dir = dir.normalize();
        return dir.startsWith(mount) && Files.isRegularFile(dir.resolve(file)) ? Optional.of(dir) : Optional.empty();
    }
}
