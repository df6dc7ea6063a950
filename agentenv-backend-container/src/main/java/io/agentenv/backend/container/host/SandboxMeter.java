package io.agentenv.backend.container.host;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.EnvdMetrics;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One sandbox's metrics read from the host ({@code SandboxBackend.hostMetrics}), with the meaning envd's
 * {@code GET /metrics} gives them (agentenv-envd's {@code SandboxMetrics} over a cgroup v1 sandbox), so the sampler
 * need not wake envd:
 * <ul>
 *   <li>cpuCount: what the JVM inside reports ({@code availableProcessors}): the CPU quota rounded up
 *   ({@code cpu.cfs_quota_us / cpu.cfs_period_us}), at most the CPUs of the sandbox's cpuset; the cpuset when
 *   unlimited. Fixed for a generation, so read once.</li>
 *   <li>cpuUsedPct: CPU time of the cgroup ({@code cpuacct.usage}) since the previous reading, against the wall time
 *   since then times cpuCount; 0..100, two decimals. The first reading covers the time since {@link #baseline} (the
 *   generation started or was re-attached).</li>
 *   <li>memory: used is {@code memory.usage_in_bytes} minus the page cache ({@code total_cache} of
 *   {@code memory.stat}), total the cgroup's limit ({@code hierarchical_memory_limit}: its own and its parents'), or
 *   the host's memory when that is smaller or there is none; the page cache is reported as memCache.</li>
 *   <li>disk: {@code statvfs} of the sandbox's disk mount point (what {@code df /} shows inside: overlayfs reports its
 *   upper dir's filesystem, which is that disk): used is total minus free blocks.</li>
 * </ul>
 *
 * <p>What is read: a few files of the sandbox's own cgroup directories (host-owned cgroupfs files at fixed names; the
 * sandbox's processes cannot replace them) and one {@code statvfs} of the mount point in the host's sandbox dir. No
 * {@code /proc} walk and no process. The host's memory comes from {@code /proc/meminfo} once per generation. A
 * reading costs a few file reads and two system calls, against envd's HTTP request and its work inside the sandbox.
 */
public final class SandboxMeter {

    /** The kernel's "no limit" is the largest page-aligned counter; anything this large is no limit (as envd). */
    static final long UNLIMITED = 1L << 62;

    private final Path cpuacctDir;
    private final Path memoryDir;
    private final Path cpuDir;
    private final Path cpusetDir;
    private final Path disk;
    private final Path meminfo;
    private final Clock clock;
    private final AtomicReference<CpuReading> previous = new AtomicReference<>();
    private volatile OptionalInt cpuCount = OptionalInt.empty();
    private volatile OptionalLong hostMemory = OptionalLong.empty();

    private record CpuReading(Instant at, long usageNanos) {}

    /**
     * @param cgroupRoot where the v1 controllers are mounted ({@code /sys/fs/cgroup})
     * @param cgroupParent the backend's cgroup parent (one segment)
     * @param id the container, whose cgroup is {@code <root>/<controller>/<parent>/<id>}
     * @param disk the sandbox's disk mount point
     * @param meminfo the host's {@code /proc/meminfo}
     */
    public SandboxMeter(Path cgroupRoot, String cgroupParent, ContainerId id, Path disk, Path meminfo, Clock clock) {
        requireNonNull(cgroupRoot, "cgroupRoot is null");
        requireNonNull(cgroupParent, "cgroupParent is null");
        requireNonNull(id, "id is null");
        this.cpuacctDir = cgroupRoot.resolve("cpuacct").resolve(cgroupParent).resolve(id.value());
        this.memoryDir = cgroupRoot.resolve("memory").resolve(cgroupParent).resolve(id.value());
        this.cpuDir = cgroupRoot.resolve("cpu").resolve(cgroupParent).resolve(id.value());
        this.cpusetDir = cgroupRoot.resolve("cpuset").resolve(cgroupParent).resolve(id.value());
        this.disk = requireNonNull(disk, "disk is null");
        this.meminfo = requireNonNull(meminfo, "meminfo is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    /**
     * Notes the cgroup's CPU time now as what the first reading is measured from (the generation just started or was
     * re-attached). When the cgroup cannot be read yet, the first reading becomes the baseline and reports 0 %.
     */
    public void baseline() {
        try {
            OptionalLong usage = cpuUsage();
            previous.set(usage.isPresent() ? new CpuReading(clock.instant(), usage.getAsLong()) : null);
        } catch (IOException e) {
            previous.set(null);
        }
    }

    /**
     * One reading now; empty when the sandbox's cgroup or disk is not there (not running, or an unusual host), so the
     * caller can ask envd instead.
     *
     * @throws IOException when a file is there but cannot be read or makes no sense
     */
    public Optional<EnvdMetrics> read() throws IOException {
        Instant now = clock.instant();
        OptionalLong usage = cpuUsage();
        Optional<Long> memoryUsage = number(memoryDir.resolve("memory.usage_in_bytes"));
        if (usage.isEmpty() || memoryUsage.isEmpty()) {
            return Optional.empty();
        }
        int cpus = cpuCount();
        double cpuPercent = cpuPercent(new CpuReading(now, usage.getAsLong()), cpus);
        MemoryStat stat = memoryStat();
        long total = hostMemory();
        Optional<Long> limit = stat.limit().isPresent()
                ? stat.limit()
                : number(memoryDir.resolve("memory.limit_in_bytes")).filter(l -> l >= 0 && l < UNLIMITED);
        if (limit.isPresent() && limit.get() < total) {
            total = limit.get();
        }
        long used = Math.min(Math.max(0, memoryUsage.get() - stat.cache()), total);
        File root = disk.toFile();
        long diskTotal = root.getTotalSpace(); // statvfs: f_blocks * f_frsize, as envd's FileStore
        if (diskTotal <= 0) {
            return Optional.empty(); // no such directory
        }
        long diskUsed = Math.max(0, diskTotal - root.getFreeSpace());
        return Optional.of(new EnvdMetrics(
                Instant.ofEpochSecond(now.getEpochSecond()),
                cpus,
                cpuPercent,
                used,
                total,
                stat.cache(),
                diskUsed,
                diskTotal));
    }

    private double cpuPercent(CpuReading current, int cpus) {
        CpuReading last = previous.getAndSet(current);
        if (last == null) {
            return 0;
        }
        double available = Duration.between(last.at(), current.at()).toNanos() / 1e9 * cpus;
        if (available <= 0) {
            return 0;
        }
        double busy = (current.usageNanos() - last.usageNanos()) / 1e9;
        double percent = Math.min(100, Math.max(0, busy / available * 100));
        return Math.round(percent * 100) / 100.0;
    }

    private OptionalLong cpuUsage() throws IOException {
        Optional<Long> usage = number(cpuacctDir.resolve("cpuacct.usage"));
        return usage.map(OptionalLong::of).orElse(OptionalLong.empty());
    }

    /** The JVM's count inside: the quota rounded up, capped by the cpuset (JDK's cgroup v1 processor count). */
    private int cpuCount() throws IOException {
        OptionalInt known = cpuCount;
        if (known.isPresent()) {
            return known.getAsInt();
        }
        int cpuset = cpusetCount().orElse(Runtime.getRuntime().availableProcessors());
        int count = cpuset;
        Optional<Long> quota = number(cpuDir.resolve("cpu.cfs_quota_us"));
        Optional<Long> period = number(cpuDir.resolve("cpu.cfs_period_us"));
        if (quota.isPresent() && period.isPresent() && quota.get() > -1 && period.get() > 0) {
            long quotaCount = (quota.get() + period.get() - 1) / period.get();
            if (quotaCount != 0) {
                count = (int) Math.min(cpuset, quotaCount);
            }
        }
        int result = Math.max(1, count);
        cpuCount = OptionalInt.of(result);
        return result;
    }

    /** CPUs of the sandbox's cpuset ({@code cpuset.effective_cpus}, a list such as {@code 0-3,6}). */
    private OptionalInt cpusetCount() throws IOException {
        String list;
        try {
            list = Files.readString(cpusetDir.resolve("cpuset.effective_cpus")).strip();
        } catch (NoSuchFileException e) {
            return OptionalInt.empty();
        }
        return cpuListSize(list);
    }

    /** The number of CPUs in a kernel CPU list ({@code 0-3,6}); empty when it is empty or not a list. */
    static OptionalInt cpuListSize(String list) {
        if (list.isBlank()) {
            return OptionalInt.empty();
        }
        int count = 0;
        try {
            for (String part : list.strip().split(",")) {
                int dash = part.indexOf('-');
                if (dash < 0) {
                    Integer.parseInt(part);
                    count++;
                } else {
                    int from = Integer.parseInt(part.substring(0, dash));
                    int to = Integer.parseInt(part.substring(dash + 1));
                    if (to < from) {
                        return OptionalInt.empty();
                    }
                    count += to - from + 1;
                }
            }
        } catch (NumberFormatException e) {
            return OptionalInt.empty();
        }
        return OptionalInt.of(count);
    }

    private record MemoryStat(Optional<Long> limit, long cache) {}

    /** {@code hierarchical_memory_limit} (empty when unlimited) and {@code total_cache} (or {@code cache}). */
    private MemoryStat memoryStat() throws IOException {
        List<String> lines;
        try {
            lines = Files.readAllLines(memoryDir.resolve("memory.stat"));
        } catch (NoSuchFileException e) {
            return new MemoryStat(Optional.empty(), 0);
        }
        Optional<Long> limit = Optional.empty();
        long cache = -1;
        long ownCache = 0;
        for (String line : lines) {
            int space = line.indexOf(' ');
            if (space < 0) {
                continue;
            }
            String key = line.substring(0, space);
            switch (key) {
                case "hierarchical_memory_limit" ->
                    limit = Optional.of(value(line, space)).filter(l -> l >= 0 && l < UNLIMITED);
                case "total_cache" -> cache = value(line, space);
                case "cache" -> ownCache = value(line, space);
                default -> {}
            }
        }
        return new MemoryStat(limit, Math.max(0, cache >= 0 ? cache : ownCache));
    }

    /** The host's memory ({@code MemTotal} of /proc/meminfo), read once. */
    private long hostMemory() throws IOException {
        OptionalLong known = hostMemory;
        if (known.isPresent()) {
            return known.getAsLong();
        }
        for (String line : Files.readAllLines(meminfo)) {
            if (line.startsWith("MemTotal:")) {
                String[] f = line.strip().split("\\s+");
                try {
                    long bytes = Math.multiplyExact(Long.parseLong(f[1]), 1024L);
                    hostMemory = OptionalLong.of(bytes);
                    return bytes;
                } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
                    throw new IOException("unexpected MemTotal line in " + meminfo, e);
                }
            }
        }
        throw new IOException("no MemTotal in " + meminfo);
    }

    private static long value(String line, int space) throws IOException {
        try {
            return Long.parseLong(line.substring(space + 1).strip());
        } catch (NumberFormatException e) {
            throw new IOException("unexpected memory.stat line: " + line, e);
        }
    }

    /** A one-number cgroup file; empty when it does not exist. */
    private static Optional<Long> number(Path file) throws IOException {
        String text;
        try {
            text = Files.readString(file).strip();
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        try {
            return Optional.of(Long.parseLong(text));
        } catch (NumberFormatException e) {
            throw new IOException("unexpected content in " + file, e);
        }
    }
}
