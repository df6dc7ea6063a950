package io.agentenv.backend.container.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.FreshHostFixture;
import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.host.HostFixture.Sandbox;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** What a process inside a sandbox can and cannot do, checked from inside a real container on this host. */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ContainerIsolationHostTest {

    private static final List<String> IDLE = List.of("/bin/sh", "-c", "sleep 1000000 & wait");
    /** CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID SETPCAP NET_BIND_SERVICE SYS_CHROOT (bits 0 1 3-8 10 18). */
    private static final String CAPABILITY_MASK = "00000000000405fb";

    @FreshHostFixture
    private HostFixture host;

    private Sandbox idle(String name, ContainerSpec.Limits limits, ContainerSpec.Privileges privileges)
            throws Exception {
        return host.run(name, IDLE, limits, privileges);
    }

    @Test
    void root_inside_has_minimal_capabilities_no_new_privileges_and_a_seccomp_filter() throws Exception {
        Sandbox sandbox = idle("caps", HostFixture.LIMITS, ContainerSpec.Privileges.NO_NEW_PRIVILEGES);

        String status = host.exec(sandbox, "cat", "/proc/self/status");

        assertThat(status)
                .contains("CapEff:\t" + CAPABILITY_MASK, "CapBnd:\t" + CAPABILITY_MASK, "CapInh:\t0000000000000000");
        assertThat(status).contains("NoNewPrivs:\t1", "Seccomp:\t2");
        host.destroy(sandbox);
    }

    @Test
    void new_user_namespaces_mounts_and_kernel_keyrings_are_refused() throws Exception {
        Sandbox sandbox = idle("seccomp", HostFixture.LIMITS, ContainerSpec.Privileges.NO_NEW_PRIVILEGES);

        assertThat(host.execFailure(sandbox, "unshare", "--user", "true").stderrTail())
                .contains("Operation not permitted");
        assertThat(host.execFailure(sandbox, "unshare", "--user", "--map-root-user", "--mount", "true")
                        .stderrTail())
                .contains("Operation not permitted");
        assertThat(host.execFailure(sandbox, "mount", "-t", "tmpfs", "none", "/mnt")
                        .stderrTail())
                .containsIgnoringCase("permission denied");
        String keyctl = host.exec(
                sandbox,
                "python3",
                "-c",
                "import ctypes, ctypes.util; libc = ctypes.CDLL(None, use_errno=True);"
                        + " r = libc.syscall(250, 0, 0, 0, 0, 0); print(r, ctypes.get_errno())"); // keyctl(2)
        assertThat(keyctl).isEqualTo("-1 1");
        String bpf = host.exec(
                sandbox,
                "python3",
                "-c",
                "import ctypes; libc = ctypes.CDLL(None, use_errno=True);"
                        + " r = libc.syscall(321, 0, 0, 0); print(r, ctypes.get_errno())"); // bpf(2)
        assertThat(bpf).isEqualTo("-1 1");
        String bgPid = host.exec(sandbox, "pgrep", "-x", "sleep");
        String attach = host.exec(
                sandbox,
                "python3",
                "-c",
                "import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True);"
                        + " r = libc.ptrace(16, int(sys.argv[1]), 0, 0); print(r, ctypes.get_errno())",
                bgPid); // PTRACE_ATTACH
        assertThat(attach).isEqualTo("0 0"); // a debugger's attach to the sandbox's own process (same uid) works
        String peek = host.exec(
                sandbox,
                "python3",
                "-c",
                "import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True);"
                        + " r = libc.syscall(310, int(sys.argv[1]), 0, 0, 0, 0, 0); print(r, ctypes.get_errno())",
                bgPid); // process_vm_readv
        assertThat(peek).isEqualTo("-1 1");
        host.destroy(sandbox);
    }

    @Test
    void the_host_filesystem_and_processes_are_not_visible_and_proc_is_masked() throws Exception {
        Sandbox sandbox = idle("fs", HostFixture.LIMITS, ContainerSpec.Privileges.NO_NEW_PRIVILEGES);

        assertThat(host.exec(sandbox, "sh", "-c", "ls /var/cache/agentenv /work 2>&1 || true"))
                .contains("No such file");
        List<String> commands =
                List.of(host.exec(sandbox, "ps", "-e", "-o", "comm=").split("\n"));
        assertThat(commands).doesNotContain("java", "systemd", "init").contains("sh", "sleep");
        for (String masked : OciSpecs.MASKED_PATHS) {
            Path onHost = Path.of(masked);
            if (Files.isRegularFile(onHost)
                    && Files.size(onHost) == 0
                    && !Files.readString(onHost).isEmpty()) {
                assertThat(host.exec(sandbox, "sh", "-c", "wc -c < " + masked))
                        .as(masked)
                        .isEqualTo("0");
            } else if (Files.isDirectory(onHost)) {
                assertThat(host.exec(sandbox, "ls", "-A", masked)).as(masked).isEmpty();
            }
        }
        assertThat(host.execFailure(sandbox, "sh", "-c", "echo /tmp/core > /proc/sys/kernel/core_pattern")
                        .stderrTail())
                .contains("Read-only file system");
        assertThat(host.exec(sandbox, "sh", "-c", "touch /root/made-inside && echo ok"))
                .isEqualTo("ok");
        assertThat(Files.exists(host.templateRootfs().resolve("root/made-inside")))
                .as("the template stays untouched")
                .isFalse();
        assertThat(Files.exists(sandbox.upper().resolve("root/made-inside"))).isTrue();
        assertThat(host.execFailure(
                                sandbox,
                                "touch",
                                HostFixture.JDK.resolve("release").toString())
                        .stderrTail())
                .as("root inside is not the JDK's owner, and the bind is read-only")
                .containsAnyOf("Permission denied", "Read-only file system");
        host.destroy(sandbox);
    }

    @Test
    void dev_has_working_devices_none_can_be_created_or_changed_and_no_host_device_shows() throws Exception {
        Sandbox sandbox = idle("dev", HostFixture.LIMITS, ContainerSpec.Privileges.NO_NEW_PRIVILEGES);

        assertThat(host.exec(
                        sandbox,
                        "sh",
                        "-c",
                        "echo x > /dev/null && head -c 4 /dev/zero | wc -c && head -c 4 /dev/urandom | wc -c"))
                .isEqualTo("4\n4");
        assertThat(host.exec(sandbox, "sh", "-c", "readlink /dev/ptmx /dev/fd /dev/stdout"))
                .isEqualTo("pts/ptmx\n/proc/self/fd\n/proc/self/fd/1");
        assertThat(host.exec(sandbox, "python3", "-c", "import os, pty; m, s = pty.openpty(); print(os.ttyname(s))"))
                .startsWith("/dev/pts/");
        assertThat(host.execFailure(sandbox, "mknod", "/dev/sda", "b", "8", "0").stderrTail())
                .isNotEmpty();
        assertThat(host.execFailure(sandbox, "mknod", "/tmp/mem", "c", "1", "1").stderrTail())
                .contains("Operation not permitted");
        assertThat(host.execFailure(sandbox, "touch", "/dev/made-inside").stderrTail())
                .contains("Read-only file system");
        assertThat(host.execFailure(sandbox, "chmod", "0600", "/dev/null").stderrTail())
                .contains("Read-only file system");
        assertThat(host.execFailure(sandbox, "rm", "-f", "/dev/zero").stderrTail())
                .contains("Read-only file system");
        assertThat(host.exec(sandbox, "sh", "-c", "echo kept > /dev/shm/file && cat /dev/shm/file"))
                .isEqualTo("kept");
        assertThat(host.exec(sandbox, "stat", "-c", "%a", "/dev/shm", "/dev/mqueue"))
                .isEqualTo("1777\n1777");
        assertThat(host.exec(
                        sandbox, "sh", "-c", "grep -E ' /dev | /sys/fs/cgroup ' /proc/self/mountinfo | grep -c ' ro,'"))
                .isEqualTo("2");
        assertThat(host.exec(sandbox, "sh", "-c", "grep -c ' - tmpfs ' /proc/self/mountinfo"))
                .as(
                        "only /dev/shm and the masked directories (/proc/acpi, /sys/firmware, /sys's block devices) are tmpfs")
                .isEqualTo("7");
        host.destroy(sandbox);
    }

    @Test
    void sys_fs_cgroup_shows_the_sandboxes_own_limits_read_only() throws Exception {
        Sandbox sandbox = idle(
                "cgroupfs", new ContainerSpec.Limits(1, 128, 256, 16384), ContainerSpec.Privileges.NO_NEW_PRIVILEGES);

        assertThat(host.exec(sandbox, "cat", "/sys/fs/cgroup/memory/memory.limit_in_bytes"))
                .isEqualTo(Long.toString(128L << 20));
        assertThat(host.exec(sandbox, "cat", "/sys/fs/cgroup/pids/pids.max")).isEqualTo("256");
        assertThat(host.execFailure(sandbox, "sh", "-c", "echo 999999999 > /sys/fs/cgroup/memory/memory.limit_in_bytes")
                        .stderrTail())
                .contains("Read-only file system");
        assertThat(host.execFailure(sandbox, "mkdir", "/sys/fs/cgroup/escape").stderrTail())
                .contains("Read-only file system");
        host.destroy(sandbox);
    }

    @Test
    void a_child_over_the_memory_limit_is_killed_while_the_sandbox_keeps_running() throws Exception {
        Sandbox sandbox =
                idle("oom", new ContainerSpec.Limits(1, 128, 256, 16384), ContainerSpec.Privileges.NO_NEW_PRIVILEGES);

        CommandFailedException oom =
                host.execFailure(sandbox, "python3", "-c", "b = bytearray(400 * 1024 * 1024); print(len(b))");

        assertThat(oom.exitCode()).hasValue(137);
        assertThat(host.runc.state(sandbox.id()).orElseThrow().status()).isEqualTo(ContainerState.Status.RUNNING);
        assertThat(host.exec(sandbox, "echo", "alive")).isEqualTo("alive");
        Path memory = host.cgroups.pathsOf(sandbox.id().value()).stream()
                .filter(p -> p.startsWith(host.layout.cgroupRoot().resolve("memory")))
                .findFirst()
                .orElseThrow();
        assertThat(Files.readString(memory.resolve("memory.oom_control"))).containsPattern("oom_kill [1-9]");
        assertThat(Long.parseLong(Files.readString(memory.resolve("memory.max_usage_in_bytes"))
                        .strip()))
                .isLessThanOrEqualTo(128L * 1024 * 1024);
        host.destroy(sandbox);
    }

    @Test
    void the_pids_limit_stops_a_fork_bomb() throws Exception {
        Sandbox sandbox =
                idle("pids", new ContainerSpec.Limits(1, 256, 32, 16384), ContainerSpec.Privileges.NO_NEW_PRIVILEGES);

        String forked = host.exec(
                sandbox,
                "python3",
                "-c",
                String.join(
                        "\n",
                        "import os, signal",
                        "children = []",
                        "try:",
                        "    for _ in range(100):",
                        "        pid = os.fork()",
                        "        if pid == 0:",
                        "            signal.pause()",
                        "            os._exit(0)",
                        "        children.append(pid)",
                        "except OSError:",
                        "    pass",
                        "for pid in children:",
                        "    os.kill(pid, signal.SIGKILL)",
                        "    os.waitpid(pid, 0)",
                        "print(len(children))"));

        assertThat(Integer.parseInt(forked)).isBetween(1, 31);
        host.destroy(sandbox);
    }

    @Test
    void sudo_for_the_default_user_works_only_with_setuid_allowed_and_root_stays_bounded() throws Exception {
        Sandbox strict = idle("nnp", HostFixture.LIMITS, ContainerSpec.Privileges.NO_NEW_PRIVILEGES);
        Sandbox relaxed = idle("suid", HostFixture.LIMITS, ContainerSpec.Privileges.ALLOW_SETUID);

        assertThat(host.execFailure(strict, "runuser", "-u", "user", "--", "sudo", "-n", "id", "-u")
                        .stderrTail())
                .contains("no new privileges");
        assertThat(host.exec(relaxed, "runuser", "-u", "user", "--", "sudo", "-n", "id", "-u"))
                .isEqualTo("0");
        assertThat(host.execFailure(
                                relaxed, "runuser", "-u", "user", "--", "sudo", "-n", "mount", "-t", "tmpfs", "x",
                                "/mnt")
                        .stderrTail())
                .containsIgnoringCase("permission denied");
        assertThat(host.exec(relaxed, "runuser", "-u", "user", "--", "sh", "-c", "echo $HOME; id -un"))
                .isEqualTo("/home/user\nuser");
        host.destroy(strict);
        host.destroy(relaxed);
    }

    @Test
    void tini_as_pid_1_reaps_orphans_and_extra_binds_are_read_only() throws Exception {
        // given a sandbox whose init is tini (as for envd) and a host dir bound read-only
        Path shared = Files.createDirectories(host.sandboxesDir.resolve("shared"));
        Files.writeString(shared.resolve("envd.txt"), "from the host");
        List<String> init = List.of("/usr/bin/tini", "-s", "--", "/bin/sh", "-c", "sleep 1000000");
        Sandbox sandbox = host.prepare("tini", List.of(host.templateRootfs()), init);
        RuncRuntime.writeConfig(
                sandbox.bundle(),
                host.ociSpecs.build(host.spec(
                        sandbox,
                        init,
                        HostFixture.LIMITS,
                        ContainerSpec.Privileges.NO_NEW_PRIVILEGES,
                        List.of(new ContainerSpec.ReadOnlyBind(shared, "/opt/agentenv")))));
        host.runc.create(sandbox.id(), sandbox.bundle());
        host.runc.start(sandbox.id());

        // when a command leaves an orphan behind that then exits
        host.exec(sandbox, "sh", "-c", "(sleep 0.2 &) ; true");

        // then PID 1 reaps it: no zombie remains
        HostFixture.await("the orphan is reaped", java.time.Duration.ofSeconds(10), () -> {
            try {
                return host.exec(sandbox, "ps", "-e", "-o", "stat=,comm=")
                                .lines()
                                .noneMatch(l -> l.startsWith("Z"))
                        && host.exec(sandbox, "ps", "-e", "-o", "comm=")
                                        .lines()
                                        .filter("sleep"::equals)
                                        .count()
                                == 1;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(host.exec(sandbox, "cat", "/proc/1/comm")).isEqualTo("tini");
        assertThat(host.exec(sandbox, "cat", "/opt/agentenv/envd.txt")).isEqualTo("from the host");
        assertThat(host.execFailure(sandbox, "touch", "/opt/agentenv/x").stderrTail())
                .contains("Read-only file system");
        host.destroy(sandbox);
    }

    @Test
    void a_restored_sandbox_sees_its_own_cgroups_and_memory_limit_and_never_the_servers() throws Exception {
        // given a sandbox checkpointed to disk and stopped
        Sandbox original = idle("cgsrc", HostFixture.LIMITS, ContainerSpec.Privileges.NO_NEW_PRIVILEGES);
        long originalPid = host.runc.state(original.id()).orElseThrow().pid();
        Path images = host.sandboxesDir.resolve("cgroups/images");
        host.runc.checkpoint(
                original.id(), images, host.sandboxesDir.resolve("cgroups/work"), RuncRuntime.AfterCheckpoint.STOP);
        HostFixture.await(
                "the checkpointed init has exited",
                Duration.ofSeconds(10),
                () -> ProcessHandle.of(originalPid).isEmpty());
        host.runc.delete(original.id());

        // when it is restored as a fork with a different memory limit
        ContainerSpec.Limits limits = new ContainerSpec.Limits(1, 384, 256, 16384);
        Sandbox fork = host.prepare(
                "cgfork", List.of(host.templateRootfs()), IDLE, limits, ContainerSpec.Privileges.NO_NEW_PRIVILEGES);
        host.runc.restore(fork.id(), fork.bundle(), images, fork.restoreWork());

        // then its cgroup mounts show its own cgroup in every controller, so it reads its own limit
        String own = "/" + host.layout.cgroupParent() + "/" + fork.id().value();
        List<String> cgroupMounts = host.exec(fork, "cat", "/proc/self/mountinfo")
                .lines()
                .filter(line -> line.contains(" - cgroup "))
                .toList();
        assertThat(cgroupMounts)
                .extracting(line -> line.split(" ")[4])
                .contains("/sys/fs/cgroup/memory", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct");
        assertThat(cgroupMounts)
                .allSatisfy(line -> assertThat(line.split(" ")[3]).as(line).isEqualTo(own));
        for (String serverCgroup : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
            String path = serverCgroup.substring(serverCgroup.indexOf(':', serverCgroup.indexOf(':') + 1) + 1);
            if (!path.equals("/")) {
                assertThat(cgroupMounts)
                        .noneSatisfy(line -> assertThat(line.split(" ")[3]).isEqualTo(path));
            }
        }
        assertThat(host.exec(fork, "cat", "/sys/fs/cgroup/memory/memory.limit_in_bytes"))
                .isEqualTo(String.valueOf(384L << 20));
        assertThat(host.exec(fork, "grep", "^MemTotal:", "/proc/meminfo"))
                .as("LXCFS's view of the cgroup it was restored into, not the checkpoint's 512 MiB")
                .matches("MemTotal: +" + (384 * 1024) + " kB");
        host.destroy(fork);
        host.destroy(original);
    }
}
