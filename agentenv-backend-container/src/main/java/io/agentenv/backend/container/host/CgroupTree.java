package io.agentenv.backend.container.host;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cgroup v1 hierarchy of this backend's sandboxes: runc creates {@code <root>/<controller>/<parent>/<id>} in every
 * mounted controller. Reads a sandbox's usage and finds and removes cgroups nobody owns any more.
 */
public final class CgroupTree {

    private static final Logger log = LoggerFactory.getLogger(CgroupTree.class);
    private static final Duration EMPTY_WAIT = Duration.ofSeconds(10);
    private static final Duration FREEZE_WAIT = Duration.ofSeconds(3);
    private static final Duration POLL = Duration.ofMillis(2);

    private final Path root;
    private final String parent;

    public CgroupTree(Path root, String parent) {
        this.root = requireNonNull(root, "root is null");
        this.parent = requireNonNull(parent, "parent is null");
    }

    public CgroupTree(HostLayout layout) {
        this(layout.cgroupRoot(), layout.cgroupParent());
    }

    /** Every directory of {@code name} across the mounted controllers. */
    public List<Path> pathsOf(String name) throws IOException {
        List<Path> paths = new ArrayList<>();
        for (Path parentDir : parentDirs()) {
            Path dir = parentDir.resolve(name);
            if (Files.isDirectory(dir)) {
                paths.add(dir);
            }
        }
        return paths;
    }

    /**
     * Creates the sandbox's cgroup in every mounted v1 hierarchy (the cgroup2 one of a hybrid host excluded: runc's
     * v1 cgroup mounts ignore it), for a process that must already be in it when runc starts (runc then reuses it). A
     * new cpuset cgroup gets its parent's cpus and mems: an empty cpuset admits no task. Returns the directories.
     */
    public List<Path> prepare(ContainerId id) throws IOException {
        List<Path> dirs = new ArrayList<>();
        TreeSet<Path> hierarchies = new TreeSet<>();
        try (Stream<Path> controllers = Files.list(root)) {
            for (Path controller : controllers.filter(Files::isDirectory).toList()) {
                if (!Files.exists(controller.resolve("cgroup.controllers"))
                        && hierarchies.add(controller.toRealPath())) {
                    Path parentDir = controller.resolve(parent);
                    Path dir = parentDir.resolve(id.value());
                    Files.createDirectories(dir);
                    inheritCpuset(parentDir);
                    inheritCpuset(dir);
                    dirs.add(dir);
                }
            }
        }
        return dirs;
    }

    private static void inheritCpuset(Path dir) throws IOException {
        for (String file : List.of("cpuset.cpus", "cpuset.mems")) {
            Path own = dir.resolve(file);
            Path inherited = dir.getParent().resolve(file);
            if (Files.exists(own)
                    && Files.exists(inherited)
                    && Files.readString(own).isBlank()) {
                Files.writeString(own, Files.readString(inherited).strip());
            }
        }
    }

    /** Names of the sandbox cgroups that exist in any controller. */
    public List<String> names() throws IOException {
        TreeSet<String> names = new TreeSet<>();
        for (Path parentDir : parentDirs()) {
            try (Stream<Path> children = Files.list(parentDir)) {
                children.filter(Files::isDirectory)
                        .map(p -> p.getFileName().toString())
                        .forEach(names::add);
            }
        }
        return List.copyOf(names);
    }

    /** Bytes of memory the sandbox uses now (memory.usage_in_bytes), if its memory cgroup exists. */
    public Optional<Long> memoryUsage(ContainerId id) throws IOException {
        Path file = root.resolve("memory").resolve(parent).resolve(id.value()).resolve("memory.usage_in_bytes");
        try {
            return Optional.of(Long.parseLong(Files.readString(file).strip()));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    /**
     * Freezes every process of the sandbox through the v1 freezer (no runc process: a few ms) and waits until the
     * kernel reports FROZEN. Used while a snapshot is captured. A freeze that cannot complete (a task in the middle of
     * execve waits for threads that are already frozen, so the cgroup stays FREEZING) is undone before the error is
     * thrown: a sandbox is never left half-frozen, and runc, which waits on FREEZING, never hangs on it.
     */
    public void freeze(ContainerId id) throws IOException, InterruptedException {
        try {
            setFreezer(id, "FROZEN");
        } catch (IOException e) {
            setFreezer(id, "THAWED");
            throw e;
        }
    }

    public void thaw(ContainerId id) throws IOException, InterruptedException {
        setFreezer(id, "THAWED");
    }

    /** Thaws the cgroup named {@code name} when its freezer is not THAWED (no-op when it does not exist). */
    public void thawIfFrozen(String name) throws IOException {
        Path file = root.resolve("freezer").resolve(parent).resolve(name).resolve("freezer.state");
        try {
            if (!Files.readString(file).strip().equals("THAWED")) {
                Files.writeString(file, "THAWED");
            }
        } catch (NoSuchFileException gone) {
            // nothing to thaw
        }
    }

    /** Nanoseconds of CPU time the sandbox's processes used (cpuacct.usage), if its cgroup exists. */
    public Optional<Long> cpuUsageNanos(ContainerId id) throws IOException {
        Path file = root.resolve("cpuacct").resolve(parent).resolve(id.value()).resolve("cpuacct.usage");
        try {
            return Optional.of(Long.parseLong(Files.readString(file).strip()));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    private void setFreezer(ContainerId id, String state) throws IOException, InterruptedException {
        Path file = root.resolve("freezer").resolve(parent).resolve(id.value()).resolve("freezer.state");
        Files.writeString(file, state);
        Instant deadline = Instant.now().plus(FREEZE_WAIT);
        String now;
        while (!(now = Files.readString(file).strip()).equals(state)) {
            if (Instant.now().isAfter(deadline)) {
                throw new IOException("freezer of " + id + " stuck in " + now + " on the way to " + state);
            }
            Files.writeString(file, state); // FREEZING: v1 retries the freeze on each write
            pause();
        }
    }

    /**
     * Resident memory of the sandbox's processes (anonymous memory plus mapped shared memory, {@code total_rss} +
     * {@code total_mapped_file} of memory.stat; page cache excluded), if its memory cgroup exists.
     */
    public Optional<Long> residentBytes(ContainerId id) throws IOException {
        Path file = root.resolve("memory").resolve(parent).resolve(id.value()).resolve("memory.stat");
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        long total = 0;
        for (String line : lines) {
            int space = line.indexOf(' ');
            String key = space < 0 ? line : line.substring(0, space);
            if (key.equals("total_rss") || key.equals("total_mapped_file")) {
                total += Long.parseLong(line.substring(space + 1).strip());
            }
        }
        return Optional.of(total);
    }

    /** Pids (host view) of every process in the cgroup, across controllers. */
    public List<Long> pids(String name) throws IOException {
        TreeSet<Long> pids = new TreeSet<>();
        for (Path dir : pathsOf(name)) {
            try {
                for (String line : Files.readAllLines(dir.resolve("cgroup.procs"))) {
                    if (!line.isBlank()) {
                        pids.add(Long.parseLong(line.strip()));
                    }
                }
            } catch (NoSuchFileException gone) {
                // removed concurrently
            }
        }
        return List.copyOf(pids);
    }

    /**
     * Kills every process left in the cgroup (thawing it first: frozen tasks cannot die) and removes its directory
     * in every controller. For cgroups no container owns any more.
     */
    public void reap(String name) throws IOException, InterruptedException {
        Path freezer = root.resolve("freezer").resolve(parent).resolve(name).resolve("freezer.state");
        if (Files.exists(freezer)) {
            Files.writeString(freezer, "THAWED");
        }
        Instant deadline = Instant.now().plus(EMPTY_WAIT);
        List<Long> pids;
        while (!(pids = pids(name)).isEmpty()) {
            pids.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
            if (Instant.now().isAfter(deadline)) {
                throw new IOException("cgroup " + name + " still has processes " + pids + " after SIGKILL");
            }
            pause(); // the kernel needs a moment to reap killed tasks
        }
        for (Path dir : pathsOf(name)) {
            try {
                Files.delete(dir);
            } catch (NoSuchFileException gone) {
                // removed concurrently
            }
        }
        log.atInfo().addKeyValue("sandbox_id", name).log("cgroup reaped");
    }

    private static void pause() throws InterruptedException {
        LockSupport.parkNanos(POLL.toNanos());
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
    }

    private List<Path> parentDirs() throws IOException {
        List<Path> dirs = new ArrayList<>();
        try (Stream<Path> controllers = Files.list(root)) {
            for (Path controller : controllers.sorted().toList()) {
                Path dir = controller.resolve(parent);
                if (Files.isDirectory(dir)) {
                    dirs.add(dir);
                }
            }
        }
        return dirs;
    }
}
