package io.agentenv.envd.metrics;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntSupplier;

/**
 * Reads the CPU, memory and disk use of the sandbox envd runs in. Inside a container the kernel's {@code /proc} shows
 * the host, so the sandbox's own cgroup (v2, found through {@code /proc/self/cgroup}) is preferred when it exists:
 * CPU time from {@code cpu.stat}, memory from {@code memory.current}/{@code memory.max}/{@code memory.stat}; otherwise
 * {@code /proc/stat} and {@code /proc/meminfo} (as E2B's envd does in its VM). CPU use is the share of the available
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
     * @param cgroupRoot where cgroup v2 is mounted ({@code /sys/fs/cgroup})
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
        return new SandboxMetrics(Path.of("/proc"), Path.of("/sys/fs/cgroup"), Path.of("/"), clock,
                Runtime.getRuntime()::availableProcessors, clock.instant());
    }

    MetricsSample sample() throws IOException {
        Instant now = clock.instant();
        int cpuCount = Math.max(1, cpus.getAsInt());
        Optional<Path> cgroup = ownCgroup();
        double cpuPercent = cpuPercent(cgroup, now, cpuCount);
        Memory memory = memory(cgroup);
        FileStore store = Files.getFileStore(disk);
        long diskTotal = store.getTotalSpace();
        long diskUsed = Math.max(0, diskTotal - store.getUnallocatedSpace());
        return new MetricsSample(now.getEpochSecond(), cpuCount, cpuPercent, memory.total(), memory.used(),
                memory.cache(), diskUsed, diskTotal);
    }

    /** The cgroup v2 directory of this process, if cgroup v2 is mounted and readable. */
    private Optional<Path> ownCgroup() {
        try {
            for (String line : Files.readAllLines(proc.resolve("self/cgroup"))) {
                if (line.startsWith("0::")) {
                    String relative = line.substring(3).replaceFirst("^/+", "");
                    Path dir = relative.isEmpty() ? cgroupRoot : cgroupRoot.resolve(relative).normalize();
                    if (dir.startsWith(cgroupRoot) && Files.isRegularFile(dir.resolve("cgroup.procs"))) {
                        return Optional.of(dir);
                    }
                }
            }
        } catch (IOException e) {
            // no cgroup v2 view: fall back to /proc
        }
        return Optional.empty();
    }

    private record CpuReading(Instant at, double busySeconds, double totalSeconds) {}

    private double cpuPercent(Optional<Path> cgroup, Instant now, int cpuCount) throws IOException {
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
    private Optional<CpuReading> cgroupCpu(Optional<Path> cgroup, Instant now, int cpuCount) throws IOException {
        if (cgroup.isEmpty() || cgroup.get().equals(cgroupRoot)) {
            return Optional.empty(); // the root cgroup has no cpu.stat worth reading: that is the whole host
        }
        Map<String, Long> stat = keyValues(cgroup.get().resolve("cpu.stat"));
        Long usage = stat.get("usage_usec");
        if (usage == null) {
            return Optional.empty();
        }
        double nanosOfEpoch = now.getEpochSecond() + now.getNano() / 1e9;
        return Optional.of(new CpuReading(now, usage / 1e6, nanosOfEpoch * cpuCount));
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

    private Memory memory(Optional<Path> cgroup) throws IOException {
        Map<String, Long> meminfo = keyValues(proc.resolve("meminfo"));
        long hostTotal = kib(meminfo, "MemTotal");
        if (cgroup.isPresent() && !cgroup.get().equals(cgroupRoot)) {
            Optional<Long> limit = readLimit(cgroup.get().resolve("memory.max"));
            Optional<Long> current = readLimit(cgroup.get().resolve("memory.current"));
            if (current.isPresent()) {
                Map<String, Long> stat = keyValues(cgroup.get().resolve("memory.stat"));
                long cache = stat.getOrDefault("file", 0L);
                long total = limit.filter(l -> l < hostTotal).orElse(hostTotal);
                long used = Math.max(0, current.get() - cache);
                return new Memory(total, Math.min(used, total), cache);
            }
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

    /** A single-number cgroup file; empty for "max" or when missing. */
    private static Optional<Long> readLimit(Path file) throws IOException {
        try {
            String text = Files.readString(file).trim();
            return text.equals("max") ? Optional.empty() : Optional.of(Long.parseLong(text));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (NumberFormatException e) {
            throw new IOException("unexpected content in " + file, e);
        }
    }

    /** Lines like {@code key value [unit]} or {@code Key: value kB} as key to number. */
    private static Map<String, Long> keyValues(Path file) throws IOException {
        Map<String, Long> out = new HashMap<>();
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (NoSuchFileException e) {
            return out;
        }
        for (String line : lines) {
            String[] f = line.trim().split("[:\\s]+");
            if (f.length >= 2) {
                try {
                    out.put(f[0], Long.parseLong(f[1]));
                } catch (NumberFormatException e) {
                    // not a numeric line
                }
            }
        }
        return out;
    }
}
