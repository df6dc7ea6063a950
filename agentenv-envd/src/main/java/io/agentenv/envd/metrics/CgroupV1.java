package io.agentenv.envd.metrics;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The cgroup v1 directories of this process's memory and cpuacct controllers. Memory: {@code memory.usage_in_bytes}
 * (page cache included), the limit from {@code memory.limit_in_bytes} and the {@code hierarchical_memory_limit} of
 * {@code memory.stat} (a parent's limit applies too), the cache from {@code total_cache} (or {@code cache}). CPU:
 * {@code cpuacct.usage} in nanoseconds.
 */
record CgroupV1(Optional<Path> memoryDir, Optional<Path> cpuacctDir) implements OwnCgroup {
    /**
     * The kernel reports "no limit" as the largest page-aligned counter ({@code 9223372036854771712} with 4 KiB pages);
     * anything this large is no limit.
     */
    static final long UNLIMITED = 1L << 62;

    CgroupV1 {
        requireNonNull(memoryDir, "memoryDir is null");
        requireNonNull(cpuacctDir, "cpuacctDir is null");
    }

    @Override
    public OptionalLong cpuNanos() throws IOException {
        if (cpuacctDir.isEmpty()) {
            return OptionalLong.empty();
        }
        Optional<Long> usage = KernelFiles.number(cpuacctDir.get().resolve("cpuacct.usage"));
        return usage.map(OptionalLong::of).orElse(OptionalLong.empty());
    }

    @Override
    public Optional<CgroupMemory> memory() throws IOException {
        if (memoryDir.isEmpty()) {
            return Optional.empty();
        }
        Path dir = memoryDir.get();
        Optional<Long> usage = KernelFiles.number(dir.resolve("memory.usage_in_bytes"));
        if (usage.isEmpty()) {
            return Optional.empty();
        }
        Map<String, Long> stat = KernelFiles.keyValues(dir.resolve("memory.stat"));
        Optional<Long> limit = smaller(
                limited(KernelFiles.number(dir.resolve("memory.limit_in_bytes"))),
                limited(Optional.ofNullable(stat.get("hierarchical_memory_limit"))));
        long cache = stat.getOrDefault("total_cache", stat.getOrDefault("cache", 0L));
        return Optional.of(new CgroupMemory(limit, usage.get(), Math.max(0, cache)));
    }

    private static Optional<Long> limited(Optional<Long> limit) {
        return limit.filter(l -> l >= 0 && l < UNLIMITED);
    }

    private static Optional<Long> smaller(Optional<Long> a, Optional<Long> b) {
        if (a.isEmpty()) {
            return b;
        }
        return b.isEmpty() ? a : Optional.of(Math.min(a.get(), b.get()));
    }
}
