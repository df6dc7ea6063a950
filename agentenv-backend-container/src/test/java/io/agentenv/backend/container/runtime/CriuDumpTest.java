package io.agentenv.backend.container.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class CriuDumpTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The parts of a runc 1.1 state.json that a dump reads (shape as runc writes it). */
    private static final String STATE = """
            {"id": "c1", "init_process_pid": 4242,
             "config": {
               "rootfs": "/data/sandboxes/c1/rootfs",
               "labels": ["bundle=/data/sandboxes/c1/bundle", "org.criu.config=/data/criu-runc.conf"],
               "namespaces": [%s{"type": "NEWPID", "path": ""}, {"type": "NEWNET", "path": "/run/netns/aenv-n7"}],
               "mounts": [
                 {"destination": "/proc", "device": "proc", "source": "proc"},
                 {"destination": "/dev", "device": "tmpfs", "source": "tmpfs"},
                 {"destination": "/sys/fs/cgroup", "device": "cgroup", "source": "cgroup"},
                 {"destination": "/usr/lib/jvm/jdk", "device": "bind", "source": "/usr/lib/jvm/jdk"},
                 {"destination": "/etc/resolv.conf", "device": "bind", "source": "/var/cache/resolv.conf"}],
               "mask_paths": ["/proc/acpi", "/proc/keys", "/proc/kcore"],
               "devices": [{"path": "/dev/null"}, {"path": "/dev/zero"}]},
             "cgroup_paths": {"freezer": "/sys/fs/cgroup/freezer/agentenv/c1", "memory": "/sys/fs/cgroup/memory/agentenv/c1"},
             "external_descriptors": ["/dev/null", "/dev/null", "/dev/null"]}
            """;

    private static final String MOUNTINFO = """
            85 81 0:39 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w
            121 119 0:52 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw,mode=755
            123 121 0:29 /agentenv/c1 /sys/fs/cgroup/cpu,cpuacct ro,nosuid - cgroup cgroup rw,cpu,cpuacct
            129 121 0:32 /agentenv/c1 /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory
            139 121 0:37 /agentenv/c1 /sys/fs/cgroup/systemd ro,nosuid - cgroup cgroup rw,name=systemd
            140 139 0:37 /agentenv/c1/x /sys/fs/cgroup/systemd/x ro,nosuid - cgroup cgroup rw,name=systemd
            107 95 0:6 /null /proc/keys rw,nosuid - devtmpfs devtmpfs rw,mode=755
            """;
    private static final Set<String> MASKED_FILES = Set.of("/proc/keys", "/proc/kcore");

    private static CriuDump.Facts facts(String extraNamespace) throws IOException {
        JsonNode state = JSON.readTree(STATE.formatted(extraNamespace));
        return CriuDump.facts(state, MOUNTINFO, MASKED_FILES::contains);
    }

    @Test
    void bind_mounts_cgroups_masked_files_and_devices_are_external_as_runc_marks_them() throws Exception {
        CriuDump.Facts facts = facts("");

        assertThat(facts.externalMounts())
                .containsExactly(
                        "mnt[/sys/fs/cgroup/cpu,cpuacct]:/sys/fs/cgroup/cpu,cpuacct",
                        "mnt[/sys/fs/cgroup/memory]:/sys/fs/cgroup/memory",
                        "mnt[/sys/fs/cgroup/systemd]:/sys/fs/cgroup/systemd",
                        "mnt[/usr/lib/jvm/jdk]:/usr/lib/jvm/jdk",
                        "mnt[/etc/resolv.conf]:/etc/resolv.conf",
                        "mnt[/proc/keys]:/dev/null",
                        "mnt[/proc/kcore]:/dev/null",
                        "mnt[/dev/null]:/dev/null",
                        "mnt[/dev/zero]:/dev/zero");
        assertThat(facts.pid()).isEqualTo(4242);
        assertThat(facts.rootfs()).isEqualTo(Path.of("/data/sandboxes/c1/rootfs"));
        assertThat(facts.criuConfig()).contains(Path.of("/data/criu-runc.conf"));
        assertThat(facts.freezerCgroup()).isEqualTo(Path.of("/sys/fs/cgroup/freezer/agentenv/c1"));
        assertThat(facts.descriptors()).isEqualTo("[\"/dev/null\",\"/dev/null\",\"/dev/null\"]");
    }

    @Test
    void dev_and_the_cgroup_mount_point_bound_from_the_hosts_guest_mounts_are_external() throws Exception {
        JsonNode state = JSON.readTree(guestMountsState());
        String mountinfo = MOUNTINFO.replace(
                        "121 119 0:52 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw,mode=755",
                        "121 119 254:0 /var/cache/agentenv/guest-mounts/cgroup /sys/fs/cgroup ro,nosuid - ext4 /dev/vda rw")
                + "98 85 254:0 /var/cache/agentenv/guest-mounts/dev /dev ro,nosuid,noexec - ext4 /dev/vda rw\n";

        CriuDump.Facts facts = CriuDump.facts(state, mountinfo, MASKED_FILES::contains);

        assertThat(facts.externalMounts())
                .contains(
                        "mnt[/dev]:/dev",
                        "mnt[/sys/fs/cgroup]:/sys/fs/cgroup",
                        "mnt[/sys/fs/cgroup/memory]:/sys/fs/cgroup/memory");
    }

    @Test
    void a_dev_restored_as_tmpfs_from_an_older_checkpoint_is_dumped_as_the_tmpfs_it_is() throws Exception {
        JsonNode state = JSON.readTree(guestMountsState());
        String mountinfo = MOUNTINFO + "98 85 0:45 / /dev rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755\n";

        CriuDump.Facts facts = CriuDump.facts(state, mountinfo, MASKED_FILES::contains);

        assertThat(facts.externalMounts())
                .doesNotContain("mnt[/dev]:/dev", "mnt[/sys/fs/cgroup]:/sys/fs/cgroup")
                .contains("mnt[/sys/fs/cgroup/memory]:/sys/fs/cgroup/memory", "mnt[/usr/lib/jvm/jdk]:/usr/lib/jvm/jdk");
    }

    /** {@link #STATE} with /dev and /sys/fs/cgroup bound as {@link OciSpecs} now writes them. */
    private static String guestMountsState() {
        return STATE.formatted("")
                .replace(
                        "{\"destination\": \"/dev\", \"device\": \"tmpfs\", \"source\": \"tmpfs\"}",
                        "{\"destination\": \"/dev\", \"device\": \"bind\", \"source\": \"/var/cache/agentenv/guest-mounts/dev\"}")
                .replace(
                        "{\"destination\": \"/sys/fs/cgroup\", \"device\": \"cgroup\", \"source\": \"cgroup\"}",
                        "{\"destination\": \"/sys/fs/cgroup\", \"device\": \"bind\", \"source\": \"/var/cache/agentenv/guest-mounts/cgroup\"},"
                                + " {\"destination\": \"/sys/fs/cgroup/memory\", \"device\": \"bind\", \"source\": \"/sys/fs/cgroup/memory/agentenv/c1\"}");
    }

    @Test
    void with_a_cgroup_namespace_the_cgroup_mount_is_a_real_mount_and_not_external() throws Exception {
        CriuDump.Facts facts = facts("{\"type\": \"NEWCGROUP\", \"path\": \"\"}, ");

        assertThat(facts.externalMounts()).noneMatch(m -> m.startsWith("mnt[/sys/fs/cgroup"));
    }

    @Test
    void the_command_dumps_the_init_tree_without_its_netns_with_the_sandboxs_criu_config() throws Exception {
        List<String> argv = CriuDump.argv(
                Path.of("/opt/criu/sbin/criu"),
                Path.of("/art/images"),
                Path.of("/sb/dump-work"),
                facts(""),
                RuncRuntime.AfterCheckpoint.STOP);

        assertThat(argv)
                .startsWith(
                        "/opt/criu/sbin/criu",
                        "dump",
                        "--no-default-config",
                        "--tree",
                        "4242",
                        "--images-dir",
                        "/art/images",
                        "--work-dir",
                        "/sb/dump-work",
                        "--log-file",
                        "dump.log",
                        "-v3",
                        "--root",
                        "/data/sandboxes/c1/rootfs",
                        "--freeze-cgroup",
                        "/sys/fs/cgroup/freezer/agentenv/c1",
                        "--empty-ns",
                        "net");
        assertThat(argv).containsSequence("--external", "mnt[/proc/keys]:/dev/null");
        assertThat(argv).endsWith("--config", "/data/criu-runc.conf");
        assertThat(argv).doesNotContain("--leave-running");
    }

    @Test
    void a_snapshots_dump_leaves_the_tasks_running() throws Exception {
        List<String> argv = CriuDump.argv(
                Path.of("/opt/criu/sbin/criu"),
                Path.of("/art/images"),
                Path.of("/sb/work"),
                facts(""),
                RuncRuntime.AfterCheckpoint.LEAVE_RUNNING);

        assertThat(argv).contains("--leave-running");
    }

    @Test
    void a_state_without_a_freezer_cgroup_is_refused() throws Exception {
        JsonNode state =
                JSON.readTree(STATE.formatted("").replace("\"freezer\": \"/sys/fs/cgroup/freezer/agentenv/c1\", ", ""));

        assertThatThrownBy(() -> CriuDump.facts(state, MOUNTINFO, path -> false))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("freezer");
    }

    @Test
    void criu_time_is_read_from_the_last_timestamp_of_its_log(@TempDir Path dir) throws Exception {
        Path log = Files.writeString(
                dir.resolve("dump.log"),
                "(00.000000) CRIU run id = x\n".repeat(100)
                        + "(00.063112) Writing stats\n(01.063912) Dumping finished successfully\n");

        assertThat(RuncRuntime.criuMillis(log)).hasValue(1063);
        assertThat(RuncRuntime.criuMillis(Files.writeString(dir.resolve("other.log"), "no stamp\n")))
                .isEmpty();
        assertThat(RuncRuntime.criuMillis(dir.resolve("missing.log"))).isEmpty();
    }
}
