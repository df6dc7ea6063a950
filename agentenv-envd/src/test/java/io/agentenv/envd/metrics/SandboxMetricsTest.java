package io.agentenv.envd.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Readings from fake procfs and cgroupfs trees. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SandboxMetricsTest {
    private static final Instant T0 = Instant.parse("2026-06-01T12:00:00Z");

    @TempDir
    Path temp;

    private final AtomicReference<Instant> now = new AtomicReference<>(T0);

    private Clock clock() {
        return new Clock() {
            @Override
            public java.time.ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return now.get();
            }
        };
    }

    private Path proc(String cgroupLine) throws IOException {
        Path proc = Files.createDirectories(temp.resolve("proc/self")).getParent();
        Files.writeString(proc.resolve("self/cgroup"), cgroupLine + "\n");
        Files.writeString(proc.resolve("meminfo"), """
                MemTotal:        8000000 kB
                MemFree:         2000000 kB
                MemAvailable:    5000000 kB
                Buffers:          500000 kB
                Cached:          1500000 kB
                SReclaimable:     500000 kB
                """);
        writeStat(proc, 100, 900);
        return proc;
    }

    private static void writeStat(Path proc, long busy, long idle) throws IOException {
        Files.writeString(proc.resolve("stat"), "cpu  " + busy + " 0 0 " + idle + " 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\n");
    }

    @Test
    void without_a_cgroup_memory_and_cpu_come_from_proc() throws IOException {
        Path proc = proc("0::/");
        SandboxMetrics metrics = new SandboxMetrics(proc, temp.resolve("nocgroup"), temp, clock(), () -> 2, T0);

        MetricsSample first = metrics.sample();
        writeStat(proc, 400, 1600); // +300 busy of +1000 total since the first reading
        MetricsSample second = metrics.sample();

        assertThat(first.memTotal()).isEqualTo(8_000_000L * 1024);
        assertThat(first.memCache()).isEqualTo(2_000_000L * 1024); // Cached + SReclaimable
        assertThat(first.memUsed()).isEqualTo((8_000_000L - 2_000_000 - 500_000 - 2_000_000) * 1024);
        assertThat(first.cpuUsedPercent()).isEqualTo(10.0); // since boot: 100 of 1000
        assertThat(second.cpuUsedPercent()).isEqualTo(30.0);
        assertThat(first.cpuCount()).isEqualTo(2);
        assertThat(first.timestamp()).isEqualTo(T0.getEpochSecond());
        assertThat(first.diskTotal()).isPositive();
        assertThat(first.diskUsed()).isBetween(0L, first.diskTotal());
    }

    @Test
    void the_sandboxs_own_cgroup_limits_memory_and_measures_cpu() throws IOException {
        Path proc = proc("0::/sandbox/abc");
        Path cgroup = Files.createDirectories(temp.resolve("cgroup/sandbox/abc"));
        Files.writeString(cgroup.resolve("cgroup.procs"), "1\n");
        Files.writeString(cgroup.resolve("memory.max"), "1073741824\n");
        Files.writeString(cgroup.resolve("memory.current"), "300000000\n");
        Files.writeString(cgroup.resolve("memory.stat"), "anon 200000000\nfile 100000000\n");
        Files.writeString(cgroup.resolve("cpu.stat"), "usage_usec 1000000\nuser_usec 800000\n");
        SandboxMetrics metrics = new SandboxMetrics(proc, temp.resolve("cgroup"), temp, clock(), () -> 2, T0.minusSeconds(10));

        MetricsSample first = metrics.sample();
        now.set(T0.plusSeconds(1));
        Files.writeString(cgroup.resolve("cpu.stat"), "usage_usec 2000000\n"); // 1 CPU-second in 1 s of 2 CPUs
        MetricsSample second = metrics.sample();

        assertThat(first.memTotal()).isEqualTo(1_073_741_824L);
        assertThat(first.memUsed()).isEqualTo(200_000_000L);
        assertThat(first.memCache()).isEqualTo(100_000_000L);
        assertThat(first.cpuUsedPercent()).isEqualTo(5.0); // 1 s busy over 10 s of 2 CPUs since start
        assertThat(second.cpuUsedPercent()).isEqualTo(50.0);
    }

    @Test
    void an_unlimited_cgroup_reports_the_hosts_memory_total() throws IOException {
        Path proc = proc("0::/sandbox/u");
        Path cgroup = Files.createDirectories(temp.resolve("cgroup/sandbox/u"));
        Files.writeString(cgroup.resolve("cgroup.procs"), "1\n");
        Files.writeString(cgroup.resolve("memory.max"), "max\n");
        Files.writeString(cgroup.resolve("memory.current"), "1000\n");
        SandboxMetrics metrics = new SandboxMetrics(proc, temp.resolve("cgroup"), temp, clock(), () -> 1, T0);

        assertThat(metrics.sample().memTotal()).isEqualTo(8_000_000L * 1024);
    }

    @Test
    void the_json_has_envds_field_names() {
        JsonObject json = new MetricsSample(1, 2, 12.5, 2L << 20, 1L << 20, 5, 6, 7).toJson();

        assertThat(json.keySet()).containsExactlyInAnyOrder("ts", "cpu_count", "cpu_used_pct", "mem_total", "mem_used",
                "mem_cache", "mem_total_mib", "mem_used_mib", "disk_used", "disk_total");
        assertThat(json.get("mem_total_mib").getAsLong()).isEqualTo(2);
        assertThat(json.get("cpu_used_pct").getAsDouble()).isEqualTo(12.5);
    }
}
