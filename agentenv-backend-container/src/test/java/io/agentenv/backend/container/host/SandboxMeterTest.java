package io.agentenv.backend.container.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.spi.EnvdMetrics;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.OptionalInt;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link SandboxMeter} over a fake cgroup v1 tree: the numbers mean what envd's /metrics means by them. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SandboxMeterTest {

    private static final ContainerId ID = new ContainerId("aenv-test-1");
    private static final long MIB = 1 << 20;

    @TempDir
    Path root;

    Path disk;
    Path meminfo;
    final TestClock clock = new TestClock(Instant.parse("2026-11-30T03:00:00.250Z"));

    @BeforeEach
    void cgroups() throws IOException {
        disk = Files.createDirectories(root.resolve("sandbox/disk"));
        meminfo = root.resolve("meminfo");
        Files.writeString(meminfo, "MemTotal:       24000000 kB\nMemFree:        1000 kB\n");
        write("cpuacct", "cpuacct.usage", "5000000000");
        write("cpu", "cpu.cfs_quota_us", "200000");
        write("cpu", "cpu.cfs_period_us", "100000");
        write("cpuset", "cpuset.effective_cpus", "0-3");
        write("memory", "memory.usage_in_bytes", Long.toString(300 * MIB));
        write("memory", "memory.limit_in_bytes", Long.toString(512 * MIB));
        memoryStat(512 * MIB, 100 * MIB);
    }

    private SandboxMeter meter() {
        return new SandboxMeter(root.resolve("cgroup"), "agentenv", ID, disk, meminfo, clock);
    }

    private void write(String controller, String file, String content) throws IOException {
        Path dir = Files.createDirectories(
                root.resolve("cgroup").resolve(controller).resolve("agentenv").resolve(ID.value()));
        Files.writeString(dir.resolve(file), content + "\n");
    }

    private void memoryStat(long hierarchicalLimit, long totalCache) throws IOException {
        write(
                "memory",
                "memory.stat",
                "cache 4096\nrss 1000\nhierarchical_memory_limit " + hierarchicalLimit + "\ntotal_cache " + totalCache
                        + "\ntotal_rss 2000");
    }

    @Test
    void cpu_use_is_the_cgroups_cpu_time_since_the_last_reading_over_wall_time_times_cpus() throws Exception {
        SandboxMeter meter = meter();
        meter.baseline();
        clock.advance(Duration.ofSeconds(2));
        write("cpuacct", "cpuacct.usage", Long.toString(5_000_000_000L + 1_000_000_000L)); // 1 s of 2 CPUs x 2 s

        EnvdMetrics first = meter.read().orElseThrow();
        assertThat(first.cpuCount()).isEqualTo(2);
        assertThat(first.cpuUsedPct()).isEqualTo(25.0);

        clock.advance(Duration.ofSeconds(3));
        write("cpuacct", "cpuacct.usage", Long.toString(6_000_000_000L + 2_000_000_000L)); // 2 s of 2 x 3 s
        assertThat(meter.read().orElseThrow().cpuUsedPct()).isEqualTo(33.33);

        clock.advance(Duration.ofSeconds(1));
        write("cpuacct", "cpuacct.usage", Long.toString(8_000_000_000L + 9_000_000_000L)); // more than there was
        assertThat(meter.read().orElseThrow().cpuUsedPct()).isEqualTo(100.0);
    }

    @Test
    void without_a_baseline_the_first_reading_reports_no_cpu_use_and_becomes_the_baseline() throws Exception {
        SandboxMeter meter = meter();
        assertThat(meter.read().orElseThrow().cpuUsedPct()).isZero();
        clock.advance(Duration.ofSeconds(4));
        write("cpuacct", "cpuacct.usage", Long.toString(5_000_000_000L + 2_000_000_000L));
        assertThat(meter.read().orElseThrow().cpuUsedPct()).isEqualTo(25.0);
    }

    @Test
    void the_cpu_count_is_the_quota_rounded_up_capped_by_the_cpuset_else_the_cpuset() throws Exception {
        write("cpu", "cpu.cfs_quota_us", "150000");
        assertThat(meter().read().orElseThrow().cpuCount()).isEqualTo(2);
        write("cpu", "cpu.cfs_quota_us", "800000");
        assertThat(meter().read().orElseThrow().cpuCount()).isEqualTo(4);
        write("cpu", "cpu.cfs_quota_us", "-1");
        write("cpuset", "cpuset.effective_cpus", "0-2,5");
        assertThat(meter().read().orElseThrow().cpuCount()).isEqualTo(4);
    }

    @Test
    void cpu_lists_are_counted_as_the_kernel_writes_them() {
        assertThat(SandboxMeter.cpuListSize("0")).hasValue(1);
        assertThat(SandboxMeter.cpuListSize("0-1")).hasValue(2);
        assertThat(SandboxMeter.cpuListSize("0-3,8,10-11\n")).hasValue(7);
        assertThat(SandboxMeter.cpuListSize("")).isEqualTo(OptionalInt.empty());
        assertThat(SandboxMeter.cpuListSize("3-1")).isEqualTo(OptionalInt.empty());
        assertThat(SandboxMeter.cpuListSize("x")).isEqualTo(OptionalInt.empty());
    }

    @Test
    void memory_used_leaves_out_the_page_cache_and_the_total_is_the_smallest_limit() throws Exception {
        memoryStat(256 * MIB, 100 * MIB); // a parent's limit is lower than the cgroup's own
        EnvdMetrics reading = meter().read().orElseThrow();
        assertThat(reading.memUsed()).isEqualTo(200 * MIB);
        assertThat(reading.memCache()).isEqualTo(100 * MIB);
        assertThat(reading.memTotal()).isEqualTo(256 * MIB);
    }

    @Test
    void an_unlimited_cgroup_reports_the_hosts_memory_and_usage_never_exceeds_the_total() throws Exception {
        memoryStat(Long.MAX_VALUE - 4095, 0);
        write("memory", "memory.limit_in_bytes", Long.toString(Long.MAX_VALUE - 4095));
        EnvdMetrics reading = meter().read().orElseThrow();
        assertThat(reading.memTotal()).isEqualTo(24_000_000L * 1024);

        memoryStat(100 * MIB, 0);
        assertThat(meter().read().orElseThrow().memUsed()).isEqualTo(100 * MIB);
    }

    @Test
    void the_disk_is_statvfs_of_its_mount_point_and_the_timestamp_has_second_precision() throws Exception {
        EnvdMetrics reading = meter().read().orElseThrow();
        File dir = disk.toFile();
        assertThat(reading.diskTotal()).isEqualTo(dir.getTotalSpace());
        assertThat(reading.diskUsed())
                .isCloseTo(dir.getTotalSpace() - dir.getFreeSpace(), org.assertj.core.data.Offset.offset(64 * MIB));
        assertThat(reading.timestamp()).isEqualTo(Instant.parse("2026-11-30T03:00:00Z"));
    }

    @Test
    void a_sandbox_without_its_cgroup_or_disk_has_no_host_reading() throws Exception {
        assertThat(new SandboxMeter(
                                root.resolve("cgroup"), "agentenv", new ContainerId("aenv-other"), disk, meminfo, clock)
                        .read())
                .isEmpty();
        assertThat(new SandboxMeter(root.resolve("cgroup"), "agentenv", ID, root.resolve("no-such-dir"), meminfo, clock)
                        .read())
                .isEmpty();
    }

    @Test
    void a_cgroup_file_with_unexpected_content_is_an_error() throws Exception {
        write("memory", "memory.usage_in_bytes", "lots");
        assertThatThrownBy(() -> meter().read())
                .isInstanceOf(IOException.class)
                .hasMessageContaining("memory.usage_in_bytes");
    }

    /** A clock the test moves. */
    static final class TestClock extends Clock {
        private volatile Instant now;

        TestClock(Instant start) {
            this.now = start;
        }

        void advance(Duration by) {
            now = now.plus(by);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
