package io.agentenv.backend.container.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentenv.backend.container.guest.GuestMounts;
import io.agentenv.backend.container.guest.LxcfsViews;
import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.GuestIds;
import io.agentenv.spi.VolumeMount;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class OciSpecsTest {

    private static final Path JDK = Path.of("/usr/lib/jvm/temurin-25-jdk-amd64");
    private static final GuestMounts GUEST_MOUNTS = new GuestMounts(
            Path.of("/var/cache/agentenv/guest-mounts/dev"),
            Path.of("/var/cache/agentenv/guest-mounts/cgroup"),
            Path.of("/sys/fs/cgroup"),
            List.of("cpu,cpuacct", "memory", "systemd"));
    private static final LxcfsViews LXCFS = new LxcfsViews(Path.of("/run/agentenv/lxcfs"));

    private static ContainerSpec aSpec(int cpus, long memoryMiB) {
        return aSpec(cpus, memoryMiB, ContainerSpec.Privileges.NO_NEW_PRIVILEGES);
    }

    private static ContainerSpec aSpec(int cpus, long memoryMiB, ContainerSpec.Privileges privileges) {
        return new ContainerSpec(
                new ContainerId("sbx-1"),
                Path.of("/var/lib/agentenv/sbx-1/rootfs"),
                "sbx-1",
                new ContainerSpec.InitProcess(
                        List.of("/bin/sh", "-c", "exec sleep 1"), List.of("PATH=/usr/bin:/bin"), "/", 0, 0),
                new ContainerSpec.Network("aenvv7", "10.200.0.30", "10.200.0.29", Path.of("/run/netns/aenv-n7")),
                new GuestIds(1_000_000_000, 65536),
                new ContainerSpec.Limits(cpus, memoryMiB, 512, 16384),
                Optional.of(JDK),
                List.of(new ContainerSpec.ReadOnlyBind(Path.of("/opt/agentenv/envd"), "/opt/agentenv/envd")),
                Path.of("/var/lib/agentenv/sbx-1/envd"),
                "/run/envd",
                Optional.of(Path.of("/var/cache/agentenv/resolv.conf")),
                Path.of("/var/cache/agentenv/criu-runc.conf"),
                privileges);
    }

    private static ContainerSpec withVolumes(ContainerSpec spec, List<VolumeMount> volumes) {
        return new ContainerSpec(
                spec.id(),
                spec.rootfs(),
                spec.hostname(),
                spec.process(),
                spec.network(),
                spec.ids(),
                spec.limits(),
                spec.jdkHome(),
                spec.readOnlyBinds(),
                spec.envdHostDir(),
                spec.envdGuestDir(),
                spec.resolvConf(),
                spec.criuConfig(),
                spec.privileges(),
                volumes);
    }

    @Test
    void volumes_are_bound_last_writable_or_read_only_never_over_runtime_mounts() throws Exception {
        ContainerSpec spec = withVolumes(
                aSpec(1, 256),
                List.of(
                        new VolumeMount("vol-a", Path.of("/data/volumes/a/content"), "/home/user/data", false),
                        new VolumeMount("vol-b", Path.of("/data/volumes/b/content"), "/mnt/ref", true)));

        JsonNode mounts = json(spec, true).path("mounts");

        JsonNode data = mounts.get(mounts.size() - 2);
        assertThat(data.path("destination").asText()).isEqualTo("/home/user/data");
        assertThat(data.path("source").asText()).isEqualTo("/data/volumes/a/content");
        assertThat(texts(data.path("options"))).containsExactly("bind", "rw", "nosuid", "nodev");
        JsonNode ref = mounts.get(mounts.size() - 1);
        assertThat(ref.path("destination").asText()).isEqualTo("/mnt/ref");
        assertThat(texts(ref.path("options"))).containsExactly("bind", "ro", "nosuid", "nodev");
        for (String path : List.of(
                "/proc",
                "/proc/sys/x",
                "/run",
                "/run/envd",
                "/etc",
                "/opt/agentenv/envd/lib",
                JDK.toString(),
                "/dev/shm")) {
            assertThatThrownBy(() ->
                            withVolumes(aSpec(1, 256), List.of(new VolumeMount("vol-c", Path.of("/v/c"), path, false))))
                    .as(path)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("which the runtime mounts");
        }
    }

    private static JsonNode json(ContainerSpec spec, boolean swapAccounting) throws Exception {
        return new ObjectMapper()
                .readTree(OciSpecs.toJson(
                        new OciSpecs("agentenv", swapAccounting, GUEST_MOUNTS, LXCFS, new CpuSets(List.of(0, 1, 2, 3)))
                                .build(spec)));
    }

    private static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    @Test
    void own_namespaces_a_user_ns_over_the_guest_ids_and_a_network_hook() throws Exception {
        JsonNode config = json(aSpec(2, 512), true);
        JsonNode linux = config.path("linux");

        assertThat(linux.path("namespaces").findValuesAsText("type"))
                .containsExactlyInAnyOrder("pid", "ipc", "uts", "mount", "network", "user");
        assertThat(linux.path("namespaces").findValuesAsText("path")).isEmpty();
        assertThat(linux.path("namespaces").findValuesAsText("type")).doesNotContain("cgroup");
        for (String ids : List.of("uidMappings", "gidMappings")) {
            assertThat(linux.path(ids)).hasSize(1);
            assertThat(linux.path(ids).get(0).path("containerID").asInt()).isZero();
            assertThat(linux.path(ids).get(0).path("hostID").asInt()).isEqualTo(1_000_000_000);
            assertThat(linux.path(ids).get(0).path("size").asInt()).isEqualTo(65536);
        }
        JsonNode hook = config.path("hooks").path("createRuntime").get(0);
        assertThat(texts(hook.path("args")))
                .containsExactly(
                        "sh",
                        "-c",
                        OciSpecs.NETWORK_HOOK,
                        "agentenv-network",
                        "aenvv7",
                        "10.200.0.30",
                        "10.200.0.29",
                        "/run/netns/aenv-n7");
        assertThat(linux.path("cgroupsPath").asText()).isEqualTo("/agentenv/sbx-1");
    }

    @Test
    void memory_is_limited_without_swap_cpu_by_quota_and_tasks_by_pids() throws Exception {
        JsonNode resources = json(aSpec(2, 512), true).path("linux").path("resources");

        assertThat(resources.path("memory").path("limit").asLong()).isEqualTo(512L * 1024 * 1024);
        assertThat(resources.path("memory").path("swap").asLong()).isEqualTo(512L * 1024 * 1024);
        assertThat(resources.path("cpu").path("quota").asLong()).isEqualTo(200_000);
        assertThat(resources.path("cpu").path("period").asLong()).isEqualTo(100_000);
        assertThat(resources.path("pids").path("limit").asLong()).isEqualTo(512);
        assertThat(resources.path("devices").get(0).path("allow").asBoolean()).isFalse();
    }

    @Test
    void without_swap_accounting_the_swap_limit_is_left_out() throws Exception {
        JsonNode memory =
                json(aSpec(1, 256), false).path("linux").path("resources").path("memory");

        assertThat(memory.has("swap")).isFalse();
        assertThat(memory.path("limit").asLong()).isEqualTo(256L * 1024 * 1024);
    }

    @Test
    void the_process_has_minimal_capabilities_no_new_privileges_and_bounded_open_files() throws Exception {
        JsonNode process = json(aSpec(1, 256), true).path("process");

        assertThat(texts(process.path("capabilities").path("bounding")))
                .containsExactlyInAnyOrderElementsOf(OciSpecs.CAPABILITIES)
                .doesNotContain(
                        "CAP_SYS_ADMIN",
                        "CAP_NET_ADMIN",
                        "CAP_SYS_PTRACE",
                        "CAP_SYS_MODULE",
                        "CAP_NET_RAW",
                        "CAP_MKNOD");
        assertThat(process.path("capabilities").path("inheritable")).isEmpty();
        assertThat(process.path("capabilities").path("ambient")).isEmpty();
        assertThat(process.path("noNewPrivileges").asBoolean()).isTrue();
        assertThat(process.path("rlimits").get(0).path("type").asText()).isEqualTo("RLIMIT_NOFILE");
        assertThat(process.path("rlimits").get(0).path("hard").asLong()).isEqualTo(16384);
        assertThat(process.path("terminal").asBoolean()).isFalse();
    }

    @Test
    void allowing_setuid_only_lifts_no_new_privileges_and_keeps_the_capability_bound() throws Exception {
        JsonNode process =
                json(aSpec(1, 256, ContainerSpec.Privileges.ALLOW_SETUID), true).path("process");

        assertThat(process.path("noNewPrivileges").asBoolean()).isFalse();
        assertThat(texts(process.path("capabilities").path("bounding")))
                .containsExactlyInAnyOrderElementsOf(OciSpecs.CAPABILITIES);
    }

    @Test
    void the_seccomp_profile_refuses_the_dangerous_syscalls_and_new_user_namespaces() throws Exception {
        JsonNode seccomp = json(aSpec(1, 256), true).path("linux").path("seccomp");

        assertThat(seccomp.path("defaultAction").asText()).isEqualTo("SCMP_ACT_ALLOW");
        JsonNode denyAll = seccomp.path("syscalls").get(0);
        assertThat(denyAll.path("action").asText()).isEqualTo("SCMP_ACT_ERRNO");
        assertThat(texts(denyAll.path("names")))
                .contains(
                        "keyctl",
                        "add_key",
                        "bpf",
                        "perf_event_open",
                        "userfaultfd",
                        "mount",
                        "umount2",
                        "kexec_load",
                        "init_module",
                        "finit_module",
                        "delete_module",
                        "open_by_handle_at",
                        "process_vm_writev",
                        "setns")
                .doesNotContain("ptrace"); // debuggers of the sandbox's own processes attach
        List<String> conditional = new ArrayList<>();
        seccomp.path("syscalls").forEach(rule -> {
            if (rule.has("args")) {
                conditional.addAll(texts(rule.path("names")));
            }
        });
        assertThat(conditional).contains("unshare", "clone").doesNotContain("ptrace");
        JsonNode unshare = seccomp.path("syscalls").findParents("names").stream()
                .filter(rule -> texts(rule.path("names")).equals(List.of("unshare")))
                .findFirst()
                .orElseThrow();
        assertThat(unshare.path("args").get(0).path("value").asLong()).isEqualTo(0x10000000L);
        assertThat(unshare.path("args").get(0).path("op").asText()).isEqualTo("SCMP_CMP_MASKED_EQ");
    }

    @Test
    void proc_paths_are_masked_and_read_only_as_runc_does_by_default() throws Exception {
        JsonNode linux = json(aSpec(1, 256), true).path("linux");

        assertThat(texts(linux.path("maskedPaths"))).contains("/proc/kcore", "/proc/keys", "/sys/firmware");
        assertThat(texts(linux.path("readonlyPaths"))).contains("/proc/sys", "/proc/sysrq-trigger");
    }

    @Test
    void the_jdk_is_bound_read_only_at_its_own_path_and_the_envd_dir_read_write() throws Exception {
        JsonNode mounts = json(aSpec(1, 256), true).path("mounts");

        JsonNode jdk = mounts.findParents("destination").stream()
                .filter(m -> m.path("destination").asText().equals(JDK.toString()))
                .findFirst()
                .orElseThrow();
        assertThat(jdk.path("source").asText()).isEqualTo(JDK.toString());
        assertThat(texts(jdk.path("options"))).contains("rbind", "ro");
        JsonNode envd = mounts.findParents("destination").stream()
                .filter(m -> m.path("destination").asText().equals("/run/envd"))
                .findFirst()
                .orElseThrow();
        assertThat(envd.path("source").asText()).isEqualTo("/var/lib/agentenv/sbx-1/envd");
        assertThat(texts(envd.path("options"))).contains("rw").doesNotContain("ro");
        JsonNode extra = mounts.findParents("destination").stream()
                .filter(m -> m.path("destination").asText().equals("/opt/agentenv/envd"))
                .findFirst()
                .orElseThrow();
        assertThat(texts(extra.path("options"))).contains("ro");
        assertThat(mounts.findValuesAsText("destination"))
                .contains("/proc", "/dev", "/sys", "/etc/resolv.conf")
                .doesNotContain("/tmp");
    }

    @Test
    void dev_and_the_cgroup_mount_point_are_read_only_binds_of_the_hosts_guest_mounts() throws Exception {
        JsonNode mounts = json(aSpec(1, 256), true).path("mounts");

        JsonNode dev = mount(mounts, "/dev");
        assertThat(dev.path("type").asText()).isEqualTo("bind");
        assertThat(dev.path("source").asText()).isEqualTo("/var/cache/agentenv/guest-mounts/dev");
        assertThat(texts(dev.path("options")))
                .contains("bind", "ro", "nosuid", "noexec")
                .doesNotContain("rw", "nodev", "rbind");
        JsonNode cgroup = mount(mounts, "/sys/fs/cgroup");
        assertThat(cgroup.path("source").asText()).isEqualTo("/var/cache/agentenv/guest-mounts/cgroup");
        assertThat(texts(cgroup.path("options"))).contains("bind", "ro", "nodev");
        assertThat(mount(mounts, "/dev/shm").path("type").asText())
                .isEqualTo("tmpfs"); // the sandbox's own, kept by a pause
        List<String> tmpfs = new ArrayList<>();
        mounts.forEach(m -> {
            if (m.path("type").asText().equals("tmpfs")) {
                tmpfs.add(m.path("destination").asText());
            }
        });
        assertThat(tmpfs).containsExactly("/dev/shm");
        assertThat(mounts.findValuesAsText("type")).doesNotContain("cgroup");
    }

    @Test
    void every_hierarchy_shows_the_sandboxes_own_cgroup_read_only_at_its_mount_point() throws Exception {
        JsonNode mounts = json(aSpec(1, 256), true).path("mounts");

        for (String hierarchy : List.of("cpu,cpuacct", "memory", "systemd")) {
            JsonNode bind = mount(mounts, "/sys/fs/cgroup/" + hierarchy);
            assertThat(bind.path("source").asText()).isEqualTo("/sys/fs/cgroup/" + hierarchy + "/agentenv/sbx-1");
            assertThat(texts(bind.path("options"))).contains("bind", "ro", "nosuid", "nodev", "noexec");
        }
        List<String> destinations = mounts.findValuesAsText("destination");
        assertThat(destinations.indexOf("/sys/fs/cgroup"))
                .isGreaterThan(destinations.indexOf("/sys"))
                .isLessThan(destinations.indexOf("/sys/fs/cgroup/memory"));
        assertThat(destinations.indexOf("/dev")).isLessThan(destinations.indexOf("/dev/pts"));
    }

    @Test
    void lxcfs_files_are_bound_read_only_over_proc_and_the_cpu_list_after_their_mounts() throws Exception {
        JsonNode mounts = json(aSpec(1, 256), true).path("mounts");
        List<String> destinations = mounts.findValuesAsText("destination");

        for (String path : List.of(
                "/proc/cpuinfo",
                "/proc/diskstats",
                "/proc/loadavg",
                "/proc/meminfo",
                "/proc/stat",
                "/proc/swaps",
                "/proc/uptime",
                "/sys/devices/system/cpu/online")) {
            JsonNode bind = mount(mounts, path);
            assertThat(bind.path("type").asText()).isEqualTo("bind");
            assertThat(bind.path("source").asText()).isEqualTo("/run/agentenv/lxcfs" + path);
            assertThat(texts(bind.path("options"))).contains("bind", "ro", "nosuid", "nodev", "noexec");
            assertThat(destinations.indexOf(path))
                    .isGreaterThan(destinations.indexOf("/proc"))
                    .isGreaterThan(destinations.indexOf("/sys"));
        }
        assertThat(destinations).doesNotContain("/proc/slabinfo");
    }

    @Test
    void a_sandbox_of_fewer_cpus_than_the_host_gets_a_cpuset_of_that_many_in_turn() throws Exception {
        OciSpecs specs = new OciSpecs("agentenv", true, GUEST_MOUNTS, LXCFS, new CpuSets(List.of(0, 1, 2, 3)));
        List<String> cpus = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            cpus.add(new ObjectMapper()
                    .readTree(OciSpecs.toJson(specs.build(aSpec(1, 256))))
                    .path("linux")
                    .path("resources")
                    .path("cpu")
                    .path("cpus")
                    .asText());
        }
        assertThat(cpus).containsExactly("0", "1", "2", "3", "0");

        JsonNode two = new ObjectMapper()
                .readTree(OciSpecs.toJson(specs.build(aSpec(2, 256))))
                .path("linux")
                .path("resources")
                .path("cpu");
        assertThat(two.path("cpus").asText()).isEqualTo("1,2");
        assertThat(two.path("quota").asLong()).isEqualTo(200_000);

        JsonNode all = json(aSpec(4, 256), true).path("linux").path("resources").path("cpu");
        assertThat(all.has("cpus"))
                .as("as many CPUs as the host: no cpuset of its own")
                .isFalse();
    }

    @Test
    void the_init_points_its_stdio_at_the_containers_own_dev_null_then_execs_the_program() throws Exception {
        JsonNode args = json(aSpec(1, 256), true).path("process").path("args");

        assertThat(texts(args))
                .containsExactly(
                        "/bin/sh", "-c", OciSpecs.REOPEN_STDIO, "reopen-stdio", "/bin/sh", "-c", "exec sleep 1");
    }

    private static JsonNode mount(JsonNode mounts, String destination) {
        return mounts.findParents("destination").stream()
                .filter(m -> m.path("destination").asText().equals(destination))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void runc_passes_the_criu_options_file_through_the_annotation() throws Exception {
        JsonNode spec = json(aSpec(1, 256), true);

        assertThat(spec.path("annotations").path("org.criu.config").asText())
                .isEqualTo("/var/cache/agentenv/criu-runc.conf");
        assertThat(spec.path("root").path("path").asText()).isEqualTo("/var/lib/agentenv/sbx-1/rootfs");
        assertThat(spec.path("ociVersion").asText()).isEqualTo("1.0.2");
    }

    @Test
    void bad_specs_are_refused_when_built() {
        assertThatThrownBy(() -> new ContainerSpec.Limits(0, 512, 64, 1024)).hasMessageContaining("cpuCount");
        assertThatThrownBy(() -> new ContainerSpec.Limits(1, 4, 64, 1024)).hasMessageContaining("memoryMiB");
        assertThatThrownBy(() -> new ContainerSpec.InitProcess(List.of(), List.of(), "/", 0, 0))
                .hasMessageContaining("args");
        assertThatThrownBy(() -> new ContainerSpec.InitProcess(List.of("x"), List.of("NOEQUALS"), "/", 0, 0))
                .hasMessageContaining("KEY=value");
        assertThatThrownBy(() -> new ContainerId("../etc")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ContainerId("UPPER")).isInstanceOf(IllegalArgumentException.class);
        // the hook pins with `ip netns attach`, which knows only /run/netns
        assertThatThrownBy(() -> new ContainerSpec.Network(
                        "aenvv7", "10.200.0.30", "10.200.0.29", Path.of("/var/run/other/aenv-n7")))
                .hasMessageContaining("/run/netns");
        assertThatThrownBy(() -> new ContainerSpec.Network(
                        "aenv v7", "10.200.0.30", "10.200.0.29", Path.of("/run/netns/aenv-n7")))
                .hasMessageContaining("interface name");
    }
}
