package io.agentenv.backend.container.runtime;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.GuestIds;
import io.agentenv.backend.container.host.HostLayout;
import io.agentenv.spi.VolumeMount;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Everything that differs between two sandboxes' OCI configs; {@link OciSpecs} adds what is the same for all.
 *
 * @param id the container id (also names its cgroup)
 * @param rootfs the merged overlay directory
 * @param hostname the UTS hostname inside
 * @param process what runs as the container's init, as which user, with which environment
 * @param network the veth and addresses the container's own network namespace gets (see {@link Network})
 * @param ids the host ids its user namespace maps its ids onto
 * @param limits CPU, memory, pids and open files
 * @param jdkHome a JDK to bind read-only at its own path (envd runs on it), if any
 * @param readOnlyBinds more host paths bound read-only (e.g. envd's jar), host path to absolute guest path
 * @param envdHostDir the per-sandbox host directory bound at {@code envdGuestDir} for envd's unix socket
 * @param envdGuestDir where that directory appears inside (absolute)
 * @param resolvConf a file bound read-only at /etc/resolv.conf, if any
 * @param criuConfig the file runc passes to CRIU for checkpoint and restore (org.criu.config)
 * @param privileges whether setuid programs (sudo) may raise privileges inside
 * @param volumes volumes bound at their paths, none of which may overlap a path the runtime mounts itself
 */
public record ContainerSpec(
        ContainerId id,
        Path rootfs,
        String hostname,
        InitProcess process,
        Network network,
        GuestIds ids,
        Limits limits,
        Optional<Path> jdkHome,
        List<ReadOnlyBind> readOnlyBinds,
        Path envdHostDir,
        String envdGuestDir,
        Optional<Path> resolvConf,
        Path criuConfig,
        Privileges privileges,
        List<VolumeMount> volumes) {

    /**
     * Whether processes may gain privileges through setuid binaries. Either way the capability bounding set, the
     * seccomp filter and the namespaces stay: root inside is still only as strong as {@link OciSpecs#CAPABILITIES}.
     */
    public enum Privileges {
        /** no_new_privs: setuid binaries do not elevate; {@code sudo} fails for the default user. */
        NO_NEW_PRIVILEGES,
        /** setuid binaries work, so the default user's passwordless {@code sudo} does (E2B's behaviour). */
        ALLOW_SETUID
    }

    public ContainerSpec {
        requireNonNull(id, "id is null");
        requireNonNull(process, "process is null");
        requireNonNull(limits, "limits is null");
        requireNonNull(jdkHome, "jdkHome is null");
        readOnlyBinds = List.copyOf(readOnlyBinds);
        requireNonNull(resolvConf, "resolvConf is null");
        requireNonNull(privileges, "privileges is null");
        requireAbsolute(rootfs, "rootfs");
        requireNonNull(network, "network is null");
        requireNonNull(ids, "ids is null");
        requireAbsolute(envdHostDir, "envdHostDir");
        requireAbsolute(criuConfig, "criuConfig");
        jdkHome.ifPresent(p -> requireAbsolute(p, "jdkHome"));
        resolvConf.ifPresent(p -> requireAbsolute(p, "resolvConf"));
        requireNonNull(hostname, "hostname is null");
        if (!hostname.matches("[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?")) {
            throw new IllegalArgumentException("bad hostname: " + hostname);
        }
        requireNonNull(envdGuestDir, "envdGuestDir is null");
        if (!envdGuestDir.startsWith("/") || envdGuestDir.contains("..")) {
            throw new IllegalArgumentException("envdGuestDir must be absolute without '..': " + envdGuestDir);
        }
        volumes = List.copyOf(volumes);
        List<String> runtimePaths = new ArrayList<>(List.of("/proc", "/sys", "/dev", "/etc/resolv.conf", envdGuestDir));
        jdkHome.ifPresent(jdk -> runtimePaths.add(jdk.toString()));
        readOnlyBinds.forEach(bind -> runtimePaths.add(bind.guestPath()));
        for (VolumeMount volume : volumes) {
            for (String path : runtimePaths) {
                if (volume.overlaps(path)) {
                    throw new IllegalArgumentException("volume " + volume.volume() + " at " + volume.guestPath()
                            + " overlaps " + path + ", which the runtime mounts");
                }
            }
        }
    }

    /** A container that mounts no volume. */
    public ContainerSpec(
            ContainerId id,
            Path rootfs,
            String hostname,
            InitProcess process,
            Network network,
            GuestIds ids,
            Limits limits,
            Optional<Path> jdkHome,
            List<ReadOnlyBind> readOnlyBinds,
            Path envdHostDir,
            String envdGuestDir,
            Optional<Path> resolvConf,
            Path criuConfig,
            Privileges privileges) {
        this(
                id,
                rootfs,
                hostname,
                process,
                network,
                ids,
                limits,
                jdkHome,
                readOnlyBinds,
                envdHostDir,
                envdGuestDir,
                resolvConf,
                criuConfig,
                privileges,
                List.of());
    }

    /**
     * The container's network: runc makes it a network namespace of its own (owned by its user namespace), and a hook
     * pins the namespace at {@code pin} (under /run/netns, where {@code ip netns} keeps them) and makes a veth pair
     * from the host's {@code veth} (with {@code gateway}/30) to {@code eth0} inside (with {@code address}/30 and a
     * default route through {@code gateway}) (see {@link OciSpecs#NETWORK_HOOK}), on create and on every restore.
     */
    public record Network(String veth, String address, String gateway, Path pin) {
        public Network {
            requireAbsolute(pin, "pin");
            if (!HostLayout.NETNS_DIR.equals(pin.getParent())) {
                throw new IllegalArgumentException("pin must be a name under " + HostLayout.NETNS_DIR + ": " + pin);
            }
            requireNonNull(veth, "veth is null");
            requireNonNull(address, "address is null");
            requireNonNull(gateway, "gateway is null");
            if (!veth.matches("[A-Za-z0-9_.-]{1,15}")) {
                throw new IllegalArgumentException("bad interface name: " + veth);
            }
            if (!address.matches("[0-9.]+") || !gateway.matches("[0-9.]+")) {
                throw new IllegalArgumentException("addresses must be IPv4: " + address + ", " + gateway);
            }
        }
    }

    /** A host file or directory that appears read-only at {@code guestPath} inside. */
    public record ReadOnlyBind(Path hostPath, String guestPath) {
        public ReadOnlyBind {
            requireAbsolute(hostPath, "hostPath");
            requireNonNull(guestPath, "guestPath is null");
            if (!guestPath.startsWith("/") || guestPath.contains("..") || guestPath.equals("/")) {
                throw new IllegalArgumentException("guestPath must be absolute, not / and without '..': " + guestPath);
            }
        }
    }

    /**
     * The container's first process.
     *
     * @param args program and arguments (resolved inside the rootfs)
     * @param env KEY=value entries
     * @param cwd absolute working directory inside
     * @param uid user id inside
     * @param gid group id inside
     * @param shell the POSIX shell inside that re-opens the init's stdio before exec'ing it
     *     ({@link OciSpecs#REOPEN_STDIO})
     */
    public record InitProcess(List<String> args, List<String> env, String cwd, int uid, int gid, String shell) {
        public InitProcess {
            args = List.copyOf(args);
            env = List.copyOf(env);
            requireNonNull(cwd, "cwd is null");
            requireNonNull(shell, "shell is null");
            if (!shell.startsWith("/")) {
                throw new IllegalArgumentException("shell must be absolute: " + shell);
            }
            if (args.isEmpty()) {
                throw new IllegalArgumentException("args must name a program");
            }
            if (!cwd.startsWith("/")) {
                throw new IllegalArgumentException("cwd must be absolute: " + cwd);
            }
            for (String e : env) {
                if (e.indexOf('=') < 1) {
                    throw new IllegalArgumentException("env entries are KEY=value: " + e);
                }
            }
            if (uid < 0 || gid < 0) {
                throw new IllegalArgumentException("uid and gid must be >= 0");
            }
        }

        /** An init whose stdio is re-opened by the rootfs' own {@code /bin/sh}. */
        public InitProcess(List<String> args, List<String> env, String cwd, int uid, int gid) {
            this(args, env, cwd, uid, gid, "/bin/sh");
        }
    }

    /**
     * Resource limits, enforced by the cgroup (v1) runc creates.
     *
     * @param cpuCount CPUs worth of quota per 100 ms period
     * @param memoryMiB memory limit; swap is not allowed on top
     * @param pids maximum number of tasks (processes and threads)
     * @param openFiles RLIMIT_NOFILE (hard and soft); must not exceed the host's hard limit (no CAP_SYS_RESOURCE)
     */
    public record Limits(int cpuCount, long memoryMiB, int pids, int openFiles) {
        public Limits {
            if (cpuCount < 1 || cpuCount > 1024) {
                throw new IllegalArgumentException("cpuCount must be 1..1024: " + cpuCount);
            }
            if (memoryMiB < 16) {
                throw new IllegalArgumentException("memoryMiB must be >= 16: " + memoryMiB);
            }
            if (pids < 8) {
                throw new IllegalArgumentException("pids must be >= 8: " + pids);
            }
            if (openFiles < 64) {
                throw new IllegalArgumentException("openFiles must be >= 64: " + openFiles);
            }
        }
    }

    private static void requireAbsolute(Path path, String name) {
        requireNonNull(path, name + " is null");
        if (!path.isAbsolute()) {
            throw new IllegalArgumentException(name + " must be absolute: " + path);
        }
    }
}
