package io.agentenv.backend.container.runtime;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.agentenv.backend.container.guest.GuestMounts;
import io.agentenv.backend.container.guest.GuestProcFiles;
import io.agentenv.backend.container.guest.LxcfsViews;
import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.spi.VolumeMount;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Builds a sandbox's OCI config in memory: mount, pid, ipc, uts, network and user namespaces of its own (the network
 * plumbed by {@link #NETWORK_HOOK}); cgroup limits with no swap; a minimal capability set, no_new_privs and
 * {@link SeccompPolicy}; runc's default masked and read-only /proc paths; /dev and /sys/fs/cgroup bound read-only from {@link GuestMounts}; LXCFS's views over /proc
 * and /sys files ({@link LxcfsViews}) and a cpuset of as many CPUs as the quota ({@link CpuSets}); the JDK bound
 * read-only at its own path and the per-sandbox envd directory.
 */
public final class OciSpecs {

    /** Capabilities envd (root inside) needs to run commands as other users and manage their files and processes. */
    static final List<String> CAPABILITIES = List.of(
            "CAP_CHOWN",
            "CAP_DAC_OVERRIDE",
            "CAP_FOWNER",
            "CAP_FSETID",
            "CAP_KILL",
            "CAP_SETGID",
            "CAP_SETUID",
            "CAP_SETPCAP",
            "CAP_NET_BIND_SERVICE",
            "CAP_SYS_CHROOT");
    /**
     * runc's defaults (`runc spec`), and sysfs's block devices: every sandbox's disk is a loop device of the host's,
     * whose backing file names the sandbox's id and the host's data dir.
     */
    static final List<String> MASKED_PATHS = List.of(
            "/proc/acpi",
            "/proc/asound",
            "/proc/kcore",
            "/proc/keys",
            "/proc/latency_stats",
            "/proc/timer_list",
            "/proc/timer_stats",
            "/proc/sched_debug",
            "/sys/firmware",
            "/proc/scsi",
            "/sys/block",
            "/sys/class/block",
            "/sys/dev/block",
            "/sys/devices/virtual/block");

    static final List<String> READONLY_PATHS =
            List.of("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger");
    static final long CPU_PERIOD_US = 100_000;
    static final String CRIU_CONFIG_ANNOTATION = "org.criu.config";
    /**
     * Which mount layout {@link #build} writes, for keys of checkpoints taken from it (TemplateImages): lxcfs = LXCFS's
     * files bound over /proc and /sys ({@link LxcfsViews}), 3 = the
     * sandbox's {@link GuestProcFiles} dir bound too (and its files mounted over /proc by the backend), 2 = /dev and
     * /sys/fs/cgroup bound from {@link GuestMounts}, 1 (no token) = runc's tmpfs mounts there.
     */
    public static final String MOUNT_LAYOUT = "mounts-5-userns-block-masked-lxcfs";

    /**
     * inotify instances each uid of a sandbox may hold (the kernel's usual default). The kernel counts them per user
     * namespace and charges them to host root as well, the maker of every sandbox's namespace, whose limit the host
     * setup raises far above this (scripts/lib/host/limits.sh): without a limit of its own, one sandbox could take
     * them all, from every other sandbox and from the host. Only a process in the namespace with
     * {@code CAP_SYS_RESOURCE} there can set it, and CRIU does not restore it, so the hook sets it at every start.
     */
    static final int GUEST_INOTIFY_INSTANCES = 128;
    /** inotify watches each uid of a sandbox may hold (file watchers of dev servers need tens of thousands). */
    static final int GUEST_INOTIFY_WATCHES = 65536;

    /**
     * The createRuntime hook that plumbs a container's network, run by runc in the host's namespaces when it has made
     * the container's namespaces: on create, and on restore once CRIU has made them (the checkpoint leaves the network
     * namespace out, {@code --empty-ns network}, so a restore gets an empty one of its own). The state runc passes on
     * stdin names the container's init pid. One {@code ip} in the host's namespace pins the container's network
     * namespace at $4 ({@code ip netns attach}: a bind mount of its nsfs file under /run/netns, where the host finds it
     * until the slot's release) and makes the slot's veth pair with its sandbox end made right in that namespace as
     * eth0 and its host end $1 with the gateway address $3/30, without IPv6 ({@code addrgenmode none}, then
     * {@code disable_ipv6}: the firewall's rules are IPv4, and with a link-local address there every host service
     * listening on the IPv6 wildcard answered the sandbox); a second one, in the container's namespace, gives eth0 the address $2/30,
     * brings it and lo up and routes through $3; that one runs in the container's user namespace too ({@code nsenter}:
     * root there, with every capability over its own namespaces) and first sets the namespace's own inotify limits
     * ({@link #GUEST_INOTIFY_INSTANCES}, {@link #GUEST_INOTIFY_WATCHES}), before any process of the sandbox runs. The
     * pair is made here, not ahead: a veth end moved from one namespace
     * into another costs the kernel 13-22 ms (its unregister waits for RCU), one made in place ~2 ms. A slot used again
     * (a member booted afresh in the same slot) first removes the pair and pin of the namespace before.
     */
    public static final String NETWORK_HOOK = String.join(
            "\n",
            "read -r state", // shell builtins only but for the two ip runs: this is on every create's and restore's
            // path
            "pid=${state#*\\\"pid\\\":}; pid=${pid%%[!0-9]*}",
            "[ -n \"$pid\" ] || { echo 'agentenv-network: no pid in the state' >&2; exit 1; }",
            "name=${4##*/}",
            "[ \"${4%/*}\" = /run/netns ] || { echo \"agentenv-network: $4 is not under /run/netns\" >&2; exit 1; }",
            "before=''", // what a slot used again must remove first, for printf's %b
            // the interfaces of this namespace (/sys/class/net shows those of the sysfs mount's, NetnsPool.LINKS)
            "[ -e /proc/sys/net/ipv4/conf/\"$1\" ] && before=\"link delete $1\\\\n\"",
            "[ -e \"$4\" ] && before=\"${before}netns delete $name\\\\n\"",
            "printf '%bnetns attach %s %s\\nlink add name %s type veth peer name eth0 netns %s\\n"
                    + "link set dev %s addrgenmode none\\naddr add %s/30 dev %s\\nlink set %s up\\n'"
                    + " \"$before\" \"$name\" \"$pid\" \"$1\" \"$name\" \"$1\" \"$3\" \"$1\" \"$1\" | ip -batch - || exit 1",
            // no process of the sandbox runs before the hook returns: nothing crosses the link before this
            "if [ -e /proc/sys/net/ipv6/conf/\"$1\"/disable_ipv6 ]; then",
            "  echo 1 > /proc/sys/net/ipv6/conf/\"$1\"/disable_ipv6 || exit 1; fi",
            "printf 'addr add %s/30 dev eth0\\nlink set eth0 up\\nlink set lo up\\nroute add default via %s\\n' \"$2\" \"$3\""
                    + " | nsenter -U -n -t \"$pid\" sh -c 'echo " + GUEST_INOTIFY_INSTANCES
                    + " > /proc/sys/user/max_inotify_instances && echo " + GUEST_INOTIFY_WATCHES
                    + " > /proc/sys/user/max_inotify_watches && exec ip -batch -'");

    private static final int HOOK_TIMEOUT_S = 10;
    /**
     * Run by the init's shell in the container before the init: points stdio at the container's own /dev/null and execs the init
     * in its place. runc gives the init the host's /dev/null (this server's) and re-opens it inside only when it makes
     * /dev itself; CRIU cannot dump a descriptor of a file on a mount the container does not have ("Can't lookup
     * mount"), so with /dev bound from {@link GuestMounts} the init re-opens it here, as runc would have.
     */
    static final String REOPEN_STDIO = "exec </dev/null >/dev/null 2>&1; exec \"$@\"";

    private static final List<String> READ_ONLY_BIND = List.of("bind", "ro", "nosuid", "nodev", "noexec");

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final String cgroupParent;
    private final boolean swapAccounting;
    private final GuestMounts guestMounts;
    private final LxcfsViews lxcfs;
    private final CpuSets cpuSets;

    /**
     * @param cgroupParent the cgroup every sandbox's cgroup is created under (e.g. "agentenv")
     * @param swapAccounting whether the kernel accounts swap (memory.memsw); only then is the swap limit written
     * @param guestMounts the host directories /dev and /sys/fs/cgroup are bound from
     * @param lxcfs the LXCFS files bound over /proc and /sys files
     * @param cpuSets where each container's cpuset is placed among the host's CPUs
     */
    public OciSpecs(
            String cgroupParent, boolean swapAccounting, GuestMounts guestMounts, LxcfsViews lxcfs, CpuSets cpuSets) {
        this.cgroupParent = requireNonNull(cgroupParent, "cgroupParent is null");
        this.swapAccounting = swapAccounting;
        this.guestMounts = requireNonNull(guestMounts, "guestMounts is null");
        this.lxcfs = requireNonNull(lxcfs, "lxcfs is null");
        this.cpuSets = requireNonNull(cpuSets, "cpuSets is null");
    }

    String cgroupsPath(ContainerId id) {
        return "/" + cgroupParent + "/" + id.value();
    }

    /** Throws when the LXCFS files every config binds cannot be bound now ({@link LxcfsViews#requireServing}). */
    public void requireBindSources() throws LxcfsViews.UnavailableException {
        lxcfs.requireServing();
    }

    public OciSpec build(ContainerSpec spec) {
        ContainerSpec.InitProcess init = spec.process();
        List<String> caps = CAPABILITIES;
        OciSpec.Process process = new OciSpec.Process(
                false,
                new OciSpec.User(init.uid(), init.gid()),
                withStdioReopened(init.shell(), init.args()),
                init.env(),
                init.cwd(),
                new OciSpec.Capabilities(caps, caps, List.of(), caps, List.of()),
                List.of(new OciSpec.Rlimit(
                        "RLIMIT_NOFILE",
                        spec.limits().openFiles(),
                        spec.limits().openFiles())),
                spec.privileges() == ContainerSpec.Privileges.NO_NEW_PRIVILEGES,
                null);

        long memoryBytes = spec.limits().memoryMiB() * 1024 * 1024;
        OciSpec.Resources resources = new OciSpec.Resources(
                List.of(new OciSpec.DeviceRule(false, "a", "rwm")), // runc then allows only its default device set
                new OciSpec.Memory(memoryBytes, swapAccounting ? memoryBytes : null), // swap limit == memory: no swap
                new OciSpec.Cpu(
                        spec.limits().cpuCount() * CPU_PERIOD_US,
                        CPU_PERIOD_US,
                        cpuSets.next(spec.limits().cpuCount()).orElse(null)),
                new OciSpec.Pids(spec.limits().pids()));

        OciSpec.Linux linux = new OciSpec.Linux(
                List.of(
                        new OciSpec.Namespace("pid", null),
                        new OciSpec.Namespace("ipc", null),
                        new OciSpec.Namespace("uts", null),
                        new OciSpec.Namespace("mount", null),
                        new OciSpec.Namespace("network", null),
                        new OciSpec.Namespace("user", null)),
                resources,
                cgroupsPath(spec.id()),
                SeccompPolicy.profile(),
                MASKED_PATHS,
                READONLY_PATHS,
                List.of(new OciSpec.IdMapping(
                        0, spec.ids().hostStart(), spec.ids().size())),
                List.of(new OciSpec.IdMapping(
                        0, spec.ids().hostStart(), spec.ids().size())));
        ContainerSpec.Network network = spec.network();
        OciSpec.Hooks hooks = new OciSpec.Hooks(List.of(new OciSpec.Hook(
                "/bin/sh",
                List.of(
                        "sh",
                        "-c",
                        NETWORK_HOOK,
                        "agentenv-network",
                        network.veth(),
                        network.address(),
                        network.gateway(),
                        network.pin().toString()),
                List.of("PATH=/usr/sbin:/usr/bin:/sbin:/bin"),
                HOOK_TIMEOUT_S)));

        return new OciSpec(
                "1.0.2",
                process,
                new OciSpec.Root(spec.rootfs().toString(), false),
                spec.hostname(),
                mounts(spec),
                linux,
                hooks,
                Map.of(CRIU_CONFIG_ANNOTATION, spec.criuConfig().toString()));
    }

    /**
     * The "lean" mount set of runtime-findings.md: no tmpfs on /tmp (it would be archived by every checkpoint). /dev and
     * /sys/fs/cgroup are read-only binds of the host's {@link GuestMounts} instead of runc's tmpfs mounts, which CRIU
     * archived with a {@code tar} at every dump and restore; /sys/fs/cgroup still shows the sandbox's own cgroup of
     * every hierarchy (read-only, as runc's v1 cgroup mount does) so that JVMs inside see their limits. /dev/shm stays
     * a tmpfs of its own (its content is the sandbox's and is kept by a pause).
     */
    private List<OciSpec.Mount> mounts(ContainerSpec spec) {
        List<OciSpec.Mount> mounts = new ArrayList<>(List.of(
                new OciSpec.Mount("/proc", "proc", "proc", List.of("nosuid", "noexec", "nodev")),
                // not nodev: the device nodes in it must work; read-only, so nothing can be added or changed there
                new OciSpec.Mount(
                        "/dev", "bind", guestMounts.dev().toString(), List.of("bind", "ro", "nosuid", "noexec")),
                new OciSpec.Mount(
                        "/dev/pts",
                        "devpts",
                        "devpts",
                        List.of("nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5")),
                new OciSpec.Mount(
                        "/dev/shm", "tmpfs", "shm", List.of("nosuid", "noexec", "nodev", "mode=1777", "size=65536k")),
                new OciSpec.Mount("/dev/mqueue", "mqueue", "mqueue", List.of("nosuid", "noexec", "nodev")),
                new OciSpec.Mount("/sys", "sysfs", "sysfs", List.of("nosuid", "noexec", "nodev", "ro")),
                new OciSpec.Mount("/sys/fs/cgroup", "bind", guestMounts.cgroup().toString(), READ_ONLY_BIND)));
        for (String hierarchy : guestMounts.cgroupHierarchies()) {
            Path own = guestMounts
                    .cgroupRoot()
                    .resolve(hierarchy)
                    .resolve(cgroupParent)
                    .resolve(spec.id().value());
            mounts.add(new OciSpec.Mount("/sys/fs/cgroup/" + hierarchy, "bind", own.toString(), READ_ONLY_BIND));
        }
        // after /proc and /sys: each bind covers one file of theirs
        for (LxcfsViews.Bind view : lxcfs.binds()) {
            mounts.add(
                    new OciSpec.Mount(view.guestPath(), "bind", view.hostPath().toString(), READ_ONLY_BIND));
        }
        spec.jdkHome()
                .ifPresent(jdk -> mounts.add(new OciSpec.Mount(
                        jdk.toString(), "bind", jdk.toString(), List.of("rbind", "ro", "nosuid", "nodev"))));
        for (ContainerSpec.ReadOnlyBind bind : spec.readOnlyBinds()) {
            mounts.add(new OciSpec.Mount(
                    bind.guestPath(), "bind", bind.hostPath().toString(), List.of("rbind", "ro", "nosuid", "nodev")));
        }
        mounts.add(new OciSpec.Mount(
                spec.envdGuestDir(),
                "bind",
                spec.envdHostDir().toString(),
                List.of("rbind", "rw", "nosuid", "nodev", "noexec")));
        spec.resolvConf()
                .ifPresent(resolv -> mounts.add(new OciSpec.Mount(
                        "/etc/resolv.conf",
                        "bind",
                        resolv.toString(),
                        List.of("bind", "ro", "nosuid", "nodev", "noexec"))));
        // last: a volume's path may lie in a directory of the image, never at or below the runtime's own mounts
        for (VolumeMount volume : spec.volumes()) {
            mounts.add(new OciSpec.Mount(
                    volume.guestPath(),
                    "bind",
                    volume.hostDir().toString(),
                    List.of("bind", volume.readOnly() ? "ro" : "rw", "nosuid", "nodev")));
        }
        return List.copyOf(mounts);
    }

    private static List<String> withStdioReopened(String shell, List<String> init) {
        List<String> args = new ArrayList<>(List.of(shell, "-c", REOPEN_STDIO, "reopen-stdio"));
        args.addAll(init);
        return List.copyOf(args);
    }

    static byte[] toJson(OciSpec spec) {
        try {
            return JSON.writeValueAsBytes(spec);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("OCI spec did not serialize", e); // records of strings and numbers: a bug
        }
    }
}
