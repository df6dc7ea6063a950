package io.agentenv.envd.metrics;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntSupplier;

/**
 * Reads the CPU, memory and disk use of the sandbox envd runs in. Inside a container the kernel's {@code /proc} shows
 * the host, so the sandbox's own cgroup (v2 or v1, found by {@link OwnCgroups}) is preferred when it exists: its CPU
 * time and its memory limit, usage and page cache ({@link CgroupV2}, {@link CgroupV1}); otherwise {@code /proc/stat}
 * and {@code /proc/meminfo} (as E2B's envd does in its VM). Memory used never counts page cache, whichever the source. CPU use is the share of the available
 * CPUs used since the previous reading (since boot or cgroup creation on the first). Disk is the filesystem of
 * {@code /}. Safe for concurrent use.
 */
public final class SandboxMetrics {
    private final Path proc;
    private final Path cgroupRoot;
    private final Path disk;
    private final Clock clock;
    private final IntSupplier cpus;
    private final Instant started;
    private final AtomicReference<CpuReading> previous = new AtomicReference<>();

    /**
     * @param proc where procfs is mounted ({@code /proc})
     * @param cgroupRoot where the cgroup filesystems are mounted ({@code /sys/fs/cgroup}); nothing outside it is read
     * @param disk a path on the filesystem to report ({@code /})
     * @param cpus the CPUs the sandbox may use (the JVM's view honours cgroup quotas and affinity)
     * @param started when the sandbox (envd) started: the first cgroup CPU reading covers the time since then
     */
    public SandboxMetrics(Path proc, Path cgroupRoot, Path disk, Clock clock, IntSupplier cpus, Instant started) {
        this.proc = requireNonNull(proc, "proc is null");
        this.cgroupRoot = requireNonNull(cgroupRoot, "cgroupRoot is null");
        this.disk = requireNonNull(disk, "disk is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.cpus = requireNonNull(cpus, "cpus is null");
        this.started = requireNonNull(started, "started is null");
    }

    /** The real system; the first CPU reading covers the time since this call (envd's start). */
    public static SandboxMetrics system(Clock clock) {
        return new SandboxMetrics(
                Path.of("/proc"),
                Path.of("/sys/fs/cgroup"),
                Path.of("/"),
                clock,
                Runtime.getRuntime()::availableProcessors,
                clock.instant());
    }

    MetricsSample sample() throws IOException {
        Instant now = clock.instant();
        int cpuCount = Math.max(1, cpus.getAsInt());
        Optional<OwnCgroup> cgroup = OwnCgroups.find(proc, cgroupRoot);
        double cpuPercent = cpuPercent(cgroup, now, cpuCount);
        Memory memory = memory(cgroup);
        FileStore store = Files.getFileStore(disk);
        long diskTotal = store.getTotalSpace();
        long diskUsed = Math.max(0, diskTotal - store.getUnallocatedSpace());
        return new MetricsSample(
                now.getEpochSecond(),
                cpuCount,
                cpuPercent,
                memory.total(),
                memory.used(),
                memory.cache(),
                diskUsed,
                diskTotal);
    }

    private record CpuReading(Instant at, double busySeconds, double totalSeconds) {}

    private double cpuPercent(Optional<OwnCgroup> cgroup, Instant now, int cpuCount) throws IOException {
        CpuReading current = cgroupCpu(cgroup, now, cpuCount).orElse(null);
        CpuReading baseline = null;
        if (current == null) {
            current = procCpu(now); // the first reading covers the time since boot
        } else {
            baseline = new CpuReading(started, 0, (started.getEpochSecond() + started.getNano() / 1e9) * cpuCount);
        }
        CpuReading last = previous.getAndSet(current);
        if (last == null) {
            last = baseline;
        }
        double busy = current.busySeconds();
        double total = current.totalSeconds();
        if (last != null && current.totalSeconds() > last.totalSeconds()) {
            busy -= last.busySeconds();
            total -= last.totalSeconds();
        }
        if (total <= 0) {
            return 0;
        }
        double percent = Math.min(100, Math.max(0, busy / total * 100));
        return Math.round(percent * 100) / 100.0;
    }

    /** Busy CPU seconds of the cgroup against the wall time elapsed times the CPUs it may use. */
    private static Optional<CpuReading> cgroupCpu(Optional<OwnCgroup> cgroup, Instant now, int cpuCount)
            throws IOException {
        if (cgroup.isEmpty()) {
            return Optional.empty();
        }
        OptionalLong usage = cgroup.get().cpuNanos();
        if (usage.isEmpty()) {
            return Optional.empty();
        }
        double secondsOfEpoch = now.getEpochSecond() + now.getNano() / 1e9;
        return Optional.of(new CpuReading(now, usage.getAsLong() / 1e9, secondsOfEpoch * cpuCount));
    }

    /** Busy jiffies against all jiffies, from the first line of {@code /proc/stat}. */
    private CpuReading procCpu(Instant now) throws IOException {
        for (String line : Files.readAllLines(proc.resolve("stat"))) {
            if (line.startsWith("cpu ")) {
                String[] f = line.trim().split("\\s+");
                long total = 0;
                for (int i = 1; i < f.length && i <= 8; i++) { // user nice system idle iowait irq softirq steal
                    total += Long.parseLong(f[i]);
                }
                long idle = Long.parseLong(f[4]) + (f.length > 5 ? Long.parseLong(f[5]) : 0);
                return new CpuReading(now, total - idle, total);
            }
        }
        throw new IOException("no cpu line in " + proc.resolve("stat"));
    }

    private record Memory(long total, long used, long cache) {}

    /**
     * The cgroup's limit (the host's memory when unlimited or larger), its usage without page cache (as E2B's envd
     * reports it) and that cache; from {@code /proc/meminfo} without a readable memory cgroup.
     */
    private Memory memory(Optional<OwnCgroup> cgroup) throws IOException {
        Map<String, Long> meminfo = KernelFiles.keyValues(proc.resolve("meminfo"));
        long hostTotal = kib(meminfo, "MemTotal");
        Optional<CgroupMemory> own = cgroup.isPresent() ? cgroup.get().memory() : Optional.empty();
        if (own.isPresent()) {
            CgroupMemory m = own.get();
            long total = m.limit().filter(l -> l < hostTotal).orElse(hostTotal);
            long used = Math.max(0, m.usage() - m.cache());
            return new Memory(total, Math.min(used, total), m.cache());
        }
        long free = kib(meminfo, "MemFree");
        long buffers = kib(meminfo, "Buffers");
        long cached = kib(meminfo, "Cached") + kib(meminfo, "SReclaimable");
        long used = hostTotal - free - buffers - cached;
        if (used < 0) {
            used = hostTotal - free;
        }
        return new Memory(hostTotal, Math.max(0, used), cached);
    }

    private static long kib(Map<String, Long> meminfo, String key) {
        return meminfo.getOrDefault(key, 0L) * 1024;
    }
}
