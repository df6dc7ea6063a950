package io.agentenv.envd.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.agentenv.envd.http.RestJson;
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
        Files.writeString(
                proc.resolve("stat"), "cpu  " + busy + " 0 0 " + idle + " 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\n");
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
        SandboxMetrics metrics =
                new SandboxMetrics(proc, temp.resolve("cgroup"), temp, clock(), () -> 2, T0.minusSeconds(10));

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
    void after_a_restore_into_another_cgroup_the_next_sample_reads_the_new_one() throws IOException {
        Path proc = proc("0::/sandbox/template");
        v2Cgroup(temp.resolve("cgroup/sandbox/template"), 1_073_741_824L);
        v2Cgroup(temp.resolve("cgroup/sandbox/fork"), 536_870_912L);
        SandboxMetrics metrics =
                new SandboxMetrics(proc, temp.resolve("cgroup"), temp, clock(), () -> 2, T0.minusSeconds(10));

        MetricsSample before = metrics.sample();
        Files.writeString(
                proc.resolve("self/cgroup"), "0::/sandbox/fork\n"); // what CRIU restore into a new sandbox does
        MetricsSample after = metrics.sample();
        MetricsSample again = metrics.sample();

        assertThat(before.memTotal()).isEqualTo(1_073_741_824L);
        assertThat(after.memTotal()).isEqualTo(536_870_912L);
        assertThat(again.memTotal()).isEqualTo(536_870_912L);
    }

    private static void v2Cgroup(Path dir, long limit) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("cgroup.procs"), "1\n");
        Files.writeString(dir.resolve("memory.max"), limit + "\n");
        Files.writeString(dir.resolve("memory.current"), "300000000\n");
        Files.writeString(dir.resolve("memory.stat"), "anon 200000000\nfile 100000000\n");
        Files.writeString(dir.resolve("cpu.stat"), "usage_usec 1000000\n");
    }

    private static final String V1_LINES = """
            9:name=systemd:/agentenv/sbx1
            4:memory:/agentenv/sbx1
            2:cpuacct:/agentenv/sbx1
            1:cpu:/agentenv/sbx1
            0::/""";
    private static final long MIB = 1024 * 1024;
    private static final String V1_NO_LIMIT = "9223372036854771712";

    /** A cgroup v1 memory dir: usage includes the cache, as the kernel reports it. */
    private static Path v1Memory(Path dir, String limit, long usage, String stat) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("memory.limit_in_bytes"), limit + "\n");
        Files.writeString(dir.resolve("memory.usage_in_bytes"), usage + "\n");
        Files.writeString(dir.resolve("memory.stat"), stat);
        return dir;
    }

    private static Path v1Cpuacct(Path dir, long usageNanos) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("cpuacct.usage"), usageNanos + "\n");
        return dir;
    }

    /** A {@code /proc/self/mountinfo} line of a v1 cgroup mount that shows {@code root} of its hierarchy. */
    private static String mountinfoLine(int id, String root, Path mountPoint, String controllers) {
        String escaped = mountPoint.toString().replace("\\", "\\134").replace(" ", "\\040");
        return id + " 30 0:" + id + " " + root + " " + escaped + " ro,nosuid,nodev,noexec,relatime - cgroup cgroup rw,"
                + controllers + "\n";
    }

    private static void writeMountinfo(Path proc, String... lines) throws IOException {
        String rootfs = "23 1 0:21 / / rw - overlay overlay rw\n";
        Files.writeString(proc.resolve("self/mountinfo"), rootfs + String.join("", lines));
    }

    /** What a hierarchy's root holds and a container's own cgroup does not. */
    private static void markHierarchyRoot(Path mount) throws IOException {
        Files.createDirectories(mount);
        Files.writeString(mount.resolve("release_agent"), "\n");
    }

    @Test
    void on_cgroup_v1_a_container_mounting_its_own_cgroups_reports_its_limit_and_cpu() throws IOException {
        Path proc = proc(V1_LINES); // the host's path, while runc mounted the sandbox's own dir at <root>/memory
        Path root = temp.resolve("cgroup fs"); // mountinfo escapes the space
        writeMountinfo(
                proc,
                mountinfoLine(31, "/agentenv/sbx1", root.resolve("memory"), "memory"),
                mountinfoLine(32, "/agentenv/sbx1", root.resolve("cpuacct"), "cpuacct"));
        v1Memory(
                root.resolve("memory"),
                Long.toString(512 * MIB),
                300 * MIB,
                "cache 10\nrss 1\ntotal_cache " + 100 * MIB + "\ntotal_rss " + 200 * MIB + "\n");
        Path cpuacct = v1Cpuacct(root.resolve("cpuacct"), 1_000_000_000L);
        SandboxMetrics metrics = new SandboxMetrics(proc, root, temp, clock(), () -> 2, T0.minusSeconds(10));

        MetricsSample first = metrics.sample();
        now.set(T0.plusSeconds(1));
        Files.writeString(cpuacct.resolve("cpuacct.usage"), "2000000000\n"); // 1 CPU-second in 1 s of 2 CPUs
        MetricsSample second = metrics.sample();

        assertThat(first.memTotal()).isEqualTo(512 * MIB);
        assertThat(first.memUsed()).isEqualTo(200 * MIB); // usage without the page cache, as for v2
        assertThat(first.memCache()).isEqualTo(100 * MIB);
        assertThat(first.cpuUsedPercent()).isEqualTo(5.0); // 1 s busy over 10 s of 2 CPUs since start
        assertThat(second.cpuUsedPercent()).isEqualTo(50.0);
        assertThat(first.cpuCount()).isEqualTo(2);
    }

    @Test
    void on_cgroup_v1_a_whole_hierarchy_mount_is_followed_down_the_host_path() throws IOException {
        Path proc = proc(V1_LINES.replace("2:cpuacct:", "2:cpu,cpuacct:").replace("1:cpu:/agentenv/sbx1\n", ""));
        Path root = temp.resolve("cgroup");
        writeMountinfo(
                proc,
                mountinfoLine(31, "/", root.resolve("memory"), "memory"),
                mountinfoLine(32, "/", root.resolve("cpu,cpuacct"), "cpu,cpuacct"));
        markHierarchyRoot(root.resolve("memory"));
        v1Memory(root.resolve("memory"), V1_NO_LIMIT, 5000 * MIB, "total_cache 1\n");
        v1Memory(
                root.resolve("memory/agentenv/sbx1"),
                Long.toString(256 * MIB),
                64 * MIB,
                "total_cache " + 16 * MIB + "\n");
        markHierarchyRoot(root.resolve("cpu,cpuacct"));
        v1Cpuacct(root.resolve("cpu,cpuacct"), 900_000_000_000L);
        v1Cpuacct(root.resolve("cpu,cpuacct/agentenv/sbx1"), 2_000_000_000L);
        SandboxMetrics metrics = new SandboxMetrics(proc, root, temp, clock(), () -> 1, T0.minusSeconds(10));

        MetricsSample sample = metrics.sample();

        assertThat(sample.memTotal()).isEqualTo(256 * MIB);
        assertThat(sample.memUsed()).isEqualTo(48 * MIB);
        assertThat(sample.memCache()).isEqualTo(16 * MIB);
        assertThat(sample.cpuUsedPercent()).isEqualTo(20.0); // 2 s busy over 10 s of 1 CPU
    }

    @Test
    void on_cgroup_v1_a_mount_that_shows_another_cgroup_is_not_read() throws IOException {
        Path proc = proc(V1_LINES); // as in a restored sandbox: memory shows some other cgroup, cpuacct the whole tree
        Path root = temp.resolve("cgroup");
        writeMountinfo(
                proc,
                mountinfoLine(31, "/process_api/other", root.resolve("memory"), "memory"),
                mountinfoLine(32, "/", root.resolve("cpuacct"), "cpuacct"));
        v1Memory(root.resolve("memory"), V1_NO_LIMIT, 5000 * MIB, "total_cache 0\n");
        markHierarchyRoot(root.resolve("cpuacct"));
        v1Cpuacct(root.resolve("cpuacct"), 900_000_000_000L);
        v1Cpuacct(root.resolve("cpuacct/agentenv/sbx1"), 3_000_000_000L);
        SandboxMetrics metrics = new SandboxMetrics(proc, root, temp, clock(), () -> 1, T0.minusSeconds(10));

        MetricsSample sample = metrics.sample();

        assertThat(sample.memUsed()).isEqualTo((8_000_000L - 2_000_000 - 500_000 - 2_000_000) * 1024); // meminfo
        assertThat(sample.memTotal()).isEqualTo(8_000_000L * 1024);
        assertThat(sample.cpuUsedPercent()).isEqualTo(30.0); // 3 s busy over 10 s of 1 CPU
    }

    @Test
    void on_cgroup_v1_no_limit_reports_the_hosts_memory_unless_a_parent_limits_it() throws IOException {
        // no mountinfo here (nor in the tests below): the path is then tried down to the mount itself
        Path root = temp.resolve("cgroup");
        Path memory = v1Memory(root.resolve("memory"), V1_NO_LIMIT, 30 * MIB, "cache " + 10 * MIB + "\n");
        SandboxMetrics metrics = new SandboxMetrics(proc(V1_LINES), root, temp, clock(), () -> 1, T0);

        MetricsSample unlimited = metrics.sample();
        Files.writeString(
                memory.resolve("memory.stat"),
                "cache " + 10 * MIB + "\nhierarchical_memory_limit " + 1024 * MIB + "\n");
        MetricsSample limitedByParent = metrics.sample();

        assertThat(unlimited.memTotal()).isEqualTo(8_000_000L * 1024);
        assertThat(unlimited.memUsed()).isEqualTo(20 * MIB); // "cache" counts when there is no total_cache
        assertThat(unlimited.memCache()).isEqualTo(10 * MIB);
        assertThat(limitedByParent.memTotal()).isEqualTo(1024 * MIB);
    }

    @Test
    void on_cgroup_v1_missing_controller_files_fall_back_to_proc_one_by_one() throws IOException {
        Path root = temp.resolve("cgroup");
        Files.createDirectories(root.resolve("memory")); // mounted but without usage_in_bytes
        v1Cpuacct(root.resolve("cpuacct"), 1_000_000_000L);
        SandboxMetrics cpuOnly = new SandboxMetrics(proc(V1_LINES), root, temp, clock(), () -> 2, T0.minusSeconds(10));

        MetricsSample sample = cpuOnly.sample();

        assertThat(sample.memTotal()).isEqualTo(8_000_000L * 1024);
        assertThat(sample.memCache()).isEqualTo(2_000_000L * 1024);
        assertThat(sample.cpuUsedPercent()).isEqualTo(5.0);

        Files.delete(root.resolve("cpuacct/cpuacct.usage"));
        v1Memory(root.resolve("memory"), Long.toString(512 * MIB), 3 * MIB, "total_cache " + MIB + "\n");
        SandboxMetrics memoryOnly = new SandboxMetrics(proc(V1_LINES), root, temp, clock(), () -> 2, T0);

        MetricsSample other = memoryOnly.sample();

        assertThat(other.memTotal()).isEqualTo(512 * MIB);
        assertThat(other.memUsed()).isEqualTo(2 * MIB);
        assertThat(other.cpuUsedPercent()).isEqualTo(10.0); // /proc/stat since boot: 100 of 1000
    }

    @Test
    void on_cgroup_v1_the_hierarchy_root_is_the_host_and_is_not_reported_as_the_sandbox() throws IOException {
        Path root = temp.resolve("cgroup");
        markHierarchyRoot(root.resolve("memory"));
        v1Memory(root.resolve("memory"), V1_NO_LIMIT, 7000 * MIB, "total_cache 0\n");
        markHierarchyRoot(root.resolve("cpuacct"));
        v1Cpuacct(root.resolve("cpuacct"), 900_000_000_000L);
        SandboxMetrics metrics =
                new SandboxMetrics(proc("4:memory:/\n2:cpuacct:/\n0::/"), root, temp, clock(), () -> 2, T0);

        MetricsSample sample = metrics.sample();

        assertThat(sample.memUsed()).isEqualTo((8_000_000L - 2_000_000 - 500_000 - 2_000_000) * 1024); // meminfo
        assertThat(sample.cpuUsedPercent()).isEqualTo(10.0); // /proc/stat
    }

    @Test
    void a_cgroup_path_never_leads_outside_the_cgroup_mount() throws IOException {
        Path root = temp.resolve("cgroup");
        Files.createDirectories(root.resolve("memory"));
        v1Memory(temp.resolve("outside"), Long.toString(MIB), MIB, "total_cache 0\n");
        v1Memory(temp.resolve("cgroup/outside"), Long.toString(MIB), MIB, "total_cache 0\n");
        Files.createDirectories(temp.resolve("v2"));
        Files.writeString(temp.resolve("v2/cgroup.procs"), "1\n");
        Files.writeString(temp.resolve("v2/memory.current"), "1\n");
        SandboxMetrics metrics =
                new SandboxMetrics(proc("4:memory:/../outside\n0::/../v2"), root, temp, clock(), () -> 1, T0);

        assertThat(metrics.sample().memTotal()).isEqualTo(8_000_000L * 1024);
    }

    @Test
    void on_cgroup_v2_a_namespaced_mount_of_the_sandboxs_own_cgroup_is_read() throws IOException {
        Path root = Files.createDirectories(temp.resolve("cgroup"));
        Files.writeString(root.resolve("cgroup.procs"), "1\n");
        Files.writeString(root.resolve("cgroup.events"), "populated 1\nfrozen 0\n"); // a root cgroup has none
        Files.writeString(root.resolve("memory.max"), 512 * MIB + "\n");
        Files.writeString(root.resolve("memory.current"), 30 * MIB + "\n");
        Files.writeString(root.resolve("memory.stat"), "anon 1\nfile " + 10 * MIB + "\n");
        SandboxMetrics metrics = new SandboxMetrics(proc("0::/"), root, temp, clock(), () -> 1, T0);

        MetricsSample sample = metrics.sample();

        assertThat(sample.memTotal()).isEqualTo(512 * MIB);
        assertThat(sample.memUsed()).isEqualTo(20 * MIB);
    }

    @Test
    void on_cgroup_v2_the_hosts_root_cgroup_is_not_reported_as_the_sandbox() throws IOException {
        Path root = Files.createDirectories(temp.resolve("cgroup"));
        Files.writeString(root.resolve("cgroup.procs"), "1\n");
        Files.writeString(root.resolve("memory.stat"), "anon 1\nfile 1\n");
        Files.writeString(root.resolve("cpu.stat"), "usage_usec 900000000000\n");
        SandboxMetrics metrics = new SandboxMetrics(proc("0::/"), root, temp, clock(), () -> 1, T0);

        MetricsSample sample = metrics.sample();

        assertThat(sample.memTotal()).isEqualTo(8_000_000L * 1024);
        assertThat(sample.cpuUsedPercent()).isEqualTo(10.0); // /proc/stat
    }

    @Test
    void the_json_has_envds_field_names() {
        JsonObject json = JsonParser.parseString(
                        RestJson.metrics(new MetricsSample(1, 2, 12.5, 2L << 20, 1L << 20, 5, 6, 7).toWire()))
                .getAsJsonObject();

        assertThat(json.keySet())
                .containsExactlyInAnyOrder(
                        "ts",
                        "cpu_count",
                        "cpu_used_pct",
                        "mem_total",
                        "mem_used",
                        "mem_cache",
                        "mem_total_mib",
                        "mem_used_mib",
                        "disk_used",
                        "disk_total");
        assertThat(json.get("mem_total_mib").getAsLong()).isEqualTo(2);
        assertThat(json.get("cpu_used_pct").getAsDouble()).isEqualTo(12.5);
    }
}
