package io.agentenv.backend.container.host;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Which host directories the mount namespaces of this host's processes use as the source of a mount: a sandbox's bind
 * of a host directory (its {@code /dev}, its {@code /sys/fs/cgroup}) is visible only in the sandbox's own mount
 * namespace, as a line of {@code /proc/<pid>/mountinfo} naming the source filesystem ({@code major:minor}) and the
 * directory's path in it (the mount's root, which follows a rename of that directory). Every namespace is read once,
 * through the first process found in it. A namespace no process is in (kept alive only by a bind of its nsfs file or an
 * open descriptor) is not seen; a sandbox's never is, its init lives as long as its mounts.
 */
public final class MountNamespaces {

    private static final Path PROC = Path.of("/proc");

    private MountNamespaces() {}

    /**
     * Of {@code dirs} (directories on this host), those that some mount in some mount namespace on this host has as its
     * source (the directory or a path below it), or that have a mount at or below them in this process's own
     * namespace. One removed meanwhile is not in use.
     */
    public static Set<Path> inUse(Collection<Path> dirs) throws IOException {
        List<MountTable.Entry> ownTable = MountTable.read(PROC.resolve("self/mountinfo"));
        List<Source> sources = new ArrayList<>();
        Set<Path> used = new LinkedHashSet<>();
        int gone = 0;
        for (Path dir : dirs) {
            Path real;
            try {
                real = dir.toRealPath();
            } catch (NoSuchFileException removedMeanwhile) { // nothing can bind it any more
                gone++;
                continue;
            }
            if (!MountTable.mountsUnder(real).isEmpty()) {
                used.add(dir);
            }
            sources.add(Source.of(dir, real, ownTable));
        }
        Set<String> seen = new HashSet<>();
        try (DirectoryStream<Path> processes =
                Files.newDirectoryStream(PROC, p -> isPid(p.getFileName().toString()))) {
            for (Path process : processes) {
                if (used.size() + gone == dirs.size()) {
                    break;
                }
                List<MountTable.Entry> table;
                try {
                    if (!seen.add(
                            Files.readSymbolicLink(process.resolve("ns/mnt")).toString())) {
                        continue;
                    }
                    table = MountTable.read(process.resolve("mountinfo"));
                } catch (IOException exited) { // exited meanwhile (or a kernel thread's namespace, already seen)
                    continue;
                }
                for (MountTable.Entry entry : table) {
                    Path root = Path.of(entry.root());
                    for (Source source : sources) {
                        if (source.device().equals(entry.device()) && root.startsWith(source.pathInFilesystem())) {
                            used.add(source.dir());
                        }
                    }
                }
            }
        }
        return Set.copyOf(used);
    }

    private static boolean isPid(String name) {
        return !name.isEmpty() && name.chars().allMatch(c -> c >= '0' && c <= '9');
    }

    /**
     * {@code dir} as a mount's source shows it: the device of the filesystem it is on and its path in that filesystem.
     */
    private record Source(Path dir, String device, Path pathInFilesystem) {

        /** Through the mount {@code real} is reached by in {@code table} (the latest at the deepest mount point). */
        static Source of(Path dir, Path real, List<MountTable.Entry> table) throws IOException {
            MountTable.Entry best = null;
            Path bestPoint = null;
            for (MountTable.Entry entry : table) {
                Path point = Path.of(entry.mountPoint());
                if (real.startsWith(point) && (bestPoint == null || point.getNameCount() >= bestPoint.getNameCount())) {
                    best = entry;
                    bestPoint = point;
                }
            }
            if (best == null) {
                throw new IOException("no mount holds " + real);
            }
            Path inFilesystem =
                    Path.of(best.root()).resolve(bestPoint.relativize(real).toString());
            return new Source(dir, best.device(), inFilesystem);
        }
    }
}
