package io.agentenv.envd.metrics;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A cgroup v2 directory: CPU time from {@code cpu.stat} ({@code usage_usec}), memory from {@code memory.current},
 * {@code memory.max} and the {@code file} (page cache) line of {@code memory.stat}.
 */
record CgroupV2(Path dir) implements OwnCgroup {
    CgroupV2 {
        requireNonNull(dir, "dir is null");
    }

    @Override
    public OptionalLong cpuNanos() throws IOException {
        Long usage = KernelFiles.keyValues(dir.resolve("cpu.stat")).get("usage_usec");
        return usage == null ? OptionalLong.empty() : OptionalLong.of(Math.multiplyExact(usage, 1000L));
    }

    @Override
    public Optional<CgroupMemory> memory() throws IOException {
        Optional<Long> current = KernelFiles.number(dir.resolve("memory.current"));
        if (current.isEmpty()) {
            return Optional.empty();
        }
        Map<String, Long> stat = KernelFiles.keyValues(dir.resolve("memory.stat"));
        return Optional.of(new CgroupMemory(
                KernelFiles.number(dir.resolve("memory.max")), current.get(), stat.getOrDefault("file", 0L)));
    }
}
