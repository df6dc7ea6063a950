package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.guest.LxcfsViews;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SnapshotState;
import io.agentenv.spi.TemplateId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What a sandbox of one CPU and 512 MiB sees of its resources ({@link LxcfsViews}, the cpuset of
 * {@code runtime.CpuSets}): {@code /proc/meminfo}, {@code free}, {@code nproc}, Python's {@code os.cpu_count()},
 * {@code top}, {@code /proc/cpuinfo}, the JVM's container detection, its own uptime and load, on a host of more CPUs and memory.
 * Every sandbox is a CRIU restore into a cgroup of its own, so the same holds after a pause and resume and in a sandbox
 * restored from a snapshot, which reads its own cgroup's limit, not its source's.
 */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
public class GuestResourceViewsHostTest {

    private static final TemplateId BASE = new TemplateId("base");
    private static final long MEMORY_MIB = 512;

    /**
     * One line per value, "name value...", read in one exec: the files LXCFS serves, the tools that read them, and
     * the CPU counts of the affinity mask (nproc) and of the online list (glibc's sysconf, Python).
     */
    private static final String READ_VIEWS = String.join(
            "\n",
            "echo memtotal_kb $(awk '/^MemTotal:/ {print $2}' /proc/meminfo)",
            "echo free_mb $(free -m | awk '/^Mem:/ {print $2}')",
            "echo top_mem_mib $(top -b -n 1 | awk '/^MiB Mem/ {print $4}')",
            "echo nproc $(nproc)",
            "echo os_cpu_count $(python3 -c 'import os; print(os.cpu_count())')",
            "echo processors $(grep -c '^processor' /proc/cpuinfo)",
            "echo stat_cpus $(grep -c '^cpu[0-9]' /proc/stat)",
            "echo online $(cat /sys/devices/system/cpu/online)",
            "echo uptime $(cut -d ' ' -f 1 /proc/uptime)",
            "echo loadavg $(cat /proc/loadavg)",
            "echo swaps $(wc -l < /proc/swaps)",
            "echo diskstats_read $(cat /proc/diskstats > /dev/null && echo yes)");

    @SharedBackend(settings = {"memory_mb=512", "cpu_count=1"})
    private static BackendFixture backend;

    private static Map<String, String> views(LaunchSpec spec) throws Exception {
        Map<String, String> values = new HashMap<>();
        for (String line :
                backend.exec(spec.id(), "sh", "-c", READ_VIEWS).lines().toList()) {
            int space = line.indexOf(' ');
            values.put(line.substring(0, space), line.substring(space + 1).strip());
        }
        return values;
    }

    /**
     * The sandbox sees one CPU and {@code memoryMiB}, and an uptime no longer than since {@code startedNanos} (its init
     * was restored after that), while the host has run longer.
     */
    private static void assertOwnResources(LaunchSpec spec, long memoryMiB, long startedNanos) throws Exception {
        Map<String, String> views = views(spec);
        double sinceStart = (System.nanoTime() - startedNanos) / 1e9;
        double hostUptime =
                Double.parseDouble(Files.readString(Path.of("/proc/uptime")).split(" ")[0]);

        assertThat(views)
                .as("the sandbox's own memory and CPUs")
                .containsEntry("memtotal_kb", Long.toString(memoryMiB * 1024))
                .containsEntry("free_mb", Long.toString(memoryMiB))
                .containsEntry("top_mem_mib", memoryMiB + ".0")
                .containsEntry("nproc", "1")
                .containsEntry("os_cpu_count", "1")
                .containsEntry("processors", "1")
                .containsEntry("stat_cpus", "1")
                .containsEntry("swaps", "1") // the header only: no swap
                .containsEntry("diskstats_read", "yes");
        assertThat(views.get("online")).as("one CPU online, not a list").matches("\\d+");
        assertThat(Double.parseDouble(views.get("uptime")))
                .as("the sandbox's uptime, not the host's (%s s)", hostUptime)
                .isBetween(0.0, sinceStart + 1)
                .isLessThan(hostUptime);
        assertThat(views.get("loadavg")).matches("\\d+\\.\\d\\d \\d+\\.\\d\\d \\d+\\.\\d\\d \\d+/\\d+ \\d+");
    }

    @Test
    void a_sandbox_sees_its_own_memory_cpus_and_uptime_before_and_after_a_pause() throws Exception {
        assertThat(Runtime.getRuntime().availableProcessors())
                .as("a host of more CPUs than the sandbox")
                .isGreaterThan(1);
        LaunchSpec spec = BackendFixture.baseSpec();
        long started = System.nanoTime();
        SandboxBackend sandbox = backend.launch(spec, new LaunchSource.Template(BASE));
        assertOwnResources(spec, MEMORY_MIB, started);

        Path dir = backend.artifacts("views-pause");
        PausedState paused = sandbox.pause(PauseMode.WITH_MEMORY, dir);
        sandbox.close();
        long resumed = System.nanoTime();
        backend.launch(spec, new LaunchSource.Paused(backend.factory.decodePausedState(paused.encode(), dir)));
        FileTrees.deleteTree(dir);
        assertOwnResources(spec, MEMORY_MIB, resumed);
    }

    @Test
    void the_jvm_inside_detects_one_cpu_and_the_sandboxes_memory_limit() throws Exception {
        LaunchSpec spec = BackendFixture.baseSpec();
        backend.launch(spec, new LaunchSource.Template(BASE));
        String java = backend.factory.settings().jdkHome().resolve("bin/java").toString();

        String program = "class Cpus { public static void main(String[] a) {"
                + " System.out.println(\"availableProcessors \" + Runtime.getRuntime().availableProcessors()); } }";
        String out = backend.exec(
                spec.id(),
                "sh",
                "-c",
                "printf '%s' \"$1\" > /tmp/Cpus.java && \"$2\" -XshowSettings:system /tmp/Cpus.java 2>&1",
                "jvm",
                program,
                java);

        assertThat(out)
                .contains("Provider: cgroupv1")
                .containsPattern("Effective CPU Count: 1\\b")
                .contains("Memory Limit: " + MEMORY_MIB + ".00M")
                .contains("availableProcessors 1");
    }

    @Test
    void a_sandbox_from_a_snapshot_reads_its_own_cgroup_not_its_sources() throws Exception {
        LaunchSpec source = BackendFixture.baseSpec();
        SandboxBackend running = backend.launch(source, new LaunchSource.Template(BASE));
        Path dir = backend.artifacts("views-snapshot");
        SnapshotState snapshot =
                backend.factory.decodeSnapshotState(running.snapshot(dir).encode(), dir);
        // the source's limit is lowered on the host: a view that read the source's cgroup would show it
        long lowered = 384;
        Path sourceLimit = backend.layout()
                .cgroupRoot()
                .resolve("memory")
                .resolve(backend.layout().cgroupParent())
                .resolve(backend.factory.names().containerId(source.id()).value())
                .resolve("memory.limit_in_bytes");
        Files.writeString(sourceLimit, Long.toString(lowered << 20));
        assertThat(views(source)).containsEntry("memtotal_kb", Long.toString(lowered * 1024));

        LaunchSpec child = BackendFixture.baseSpec();
        long started = System.nanoTime();
        backend.launch(child, new LaunchSource.Snapshot(snapshot));
        assertOwnResources(child, MEMORY_MIB, started);
        FileTrees.deleteTree(dir);
    }
}
