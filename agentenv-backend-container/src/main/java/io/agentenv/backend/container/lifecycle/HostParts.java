package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.guest.EnvdLayout;
import io.agentenv.backend.container.guest.GuestProcFiles;
import io.agentenv.backend.container.host.CgroupTree;
import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.HostLayout;
import io.agentenv.backend.container.host.InitReaper;
import io.agentenv.backend.container.host.ProcessRunner;
import io.agentenv.backend.container.host.UtsHostname;
import io.agentenv.backend.container.network.EgressFirewall;
import io.agentenv.backend.container.network.NetSlot;
import io.agentenv.backend.container.network.NetnsPool;
import io.agentenv.backend.container.runtime.ContainerSpec;
import io.agentenv.backend.container.runtime.OciSpecs;
import io.agentenv.backend.container.runtime.RuncLogs;
import io.agentenv.backend.container.runtime.RuncRuntime;
import io.agentenv.backend.container.storage.LayerCapture;
import io.agentenv.backend.container.storage.OverlayMounts;
import io.agentenv.backend.container.storage.SandboxDirs;
import io.agentenv.backend.container.storage.SandboxDisks;
import io.agentenv.backend.container.storage.SpareDisks;
import io.agentenv.backend.container.storage.Unmounts;
import io.agentenv.envd.client.EnvdClients;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The building blocks one backend instance shares between its sandboxes, and the few file and process steps they all
 * use (envd's command line, layer copies, moves between the sandbox and artifact dirs). Built once by
 * {@code ContainerBackendFactory#initialize}.
 */
public record HostParts(
        ContainerSettings settings,
        HostLayout layout,
        ProcessRunner runner,
        OciSpecs ociSpecs,
        OverlayMounts overlays,
        SandboxDisks disks,
        EgressFirewall firewall,
        NetnsPool pool,
        RuncRuntime runc,
        CgroupTree cgroups,
        LayerCapture layerCapture,
        EnvdClients envdClients,
        Path sandboxesDir,
        Path claimsDir,
        Path criuConfig,
        InitReaper reaper,
        PauseReleases pauseReleases,
        UtsHostname hostnames) {

    private static final Duration FILE_TIMEOUT = Duration.ofMinutes(5);
    private static final String PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    public HostParts {
        requireNonNull(settings, "settings is null");
        requireNonNull(layout, "layout is null");
        requireNonNull(runner, "runner is null");
        requireNonNull(ociSpecs, "ociSpecs is null");
        requireNonNull(overlays, "overlays is null");
        requireNonNull(disks, "disks is null");
        requireNonNull(firewall, "firewall is null");
        requireNonNull(pool, "pool is null");
        requireNonNull(runc, "runc is null");
        requireNonNull(cgroups, "cgroups is null");
        requireNonNull(layerCapture, "layerCapture is null");
        requireNonNull(envdClients, "envdClients is null");
        requireNonNull(sandboxesDir, "sandboxesDir is null");
        requireNonNull(criuConfig, "criuConfig is null");
        requireNonNull(claimsDir, "claimsDir is null");
        requireNonNull(reaper, "reaper is null");
        requireNonNull(pauseReleases, "pauseReleases is null");
        requireNonNull(hostnames, "hostnames is null");
    }

    /**
     * The CRIU options runc passes for this backend's containers: the host setup's (network lock) plus
     * {@code tcp-close} (connections into a sandbox are cut by a checkpoint; clients reconnect), {@code ext-unix-sk}
     * (external unix sockets of the sandbox's own programs) and {@code manage-cgroups=ignore}: runc creates every
     * sandbox's cgroups and sets their limits itself, and a restore runs CRIU inside them, so CRIU neither dumps them
     * (which mounted every v1 controller: ~19 ms of each checkpoint) nor restores them. The {@code =} matters: the
     * option's argument is optional, so {@code manage-cgroups ignore} would be read as soft mode.
     */
    public static String criuOptions(String setupOptions) {
        StringBuilder options = new StringBuilder(setupOptions.strip()).append('\n');
        for (String option : List.of("tcp-close", "ext-unix-sk", "manage-cgroups=ignore")) {
            if (!setupOptions.lines().map(String::strip).toList().contains(option)) {
                options.append(option).append('\n');
            }
        }
        return options.toString();
    }

    /** The container id a sandbox gets when it is restored or booted for itself. */
    public ContainerId containerId(SandboxId id) {
        return new ContainerId(settings.idPrefix() + id.value());
    }

    /**
     * The container a sandbox runs in: a claimed warm-pool member's ({@link #claim}), else {@link #containerId}.
     * Restart recovery and the reaper go through this.
     */
    public ContainerId containerFor(SandboxId id) throws IOException {
        Path claim = claimsDir.resolve(id.value());
        if (Files.isRegularFile(claim)) {
            return new ContainerId(Files.readString(claim).strip());
        }
        return containerId(id);
    }

    /** Records that sandbox {@code id} runs in warm-pool member {@code container} (atomically). */
    void claim(SandboxId id, ContainerId container) throws IOException {
        recordClaim(claimsDir, id, container);
    }

    static void recordClaim(Path claimsDir, SandboxId id, ContainerId container) throws IOException {
        Path tmp = claimsDir.resolve("." + id.value() + ".tmp");
        try {
            Files.writeString(tmp, container.value());
        } catch (NoSuchFileException e) { // the first claim on this host: made here, not tried (a mkdir) on every claim
            Files.createDirectories(claimsDir);
            Files.writeString(tmp, container.value());
        }
        Files.move(tmp, claimsDir.resolve(id.value()), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    void unclaim(SandboxId id) throws IOException {
        Files.deleteIfExists(claimsDir.resolve(id.value()));
    }

    public SandboxDirs dirs(ContainerId id) {
        return SandboxDirs.of(sandboxesDir, id);
    }

    static Path layersDir(SandboxDirs dirs) {
        return dirs.dir().resolve("layers");
    }

    static Path envdSocket(SandboxDirs dirs) {
        return dirs.envd().resolve(EnvdLayout.ENVD_SOCKET);
    }

    /** What a new sandbox of a template gets: the CPU and memory its cgroup enforces and the size of its own disk. */
    public Resources resources() {
        return new Resources(settings.cpuCount(), settings.memoryMiB(), settings.diskMiB());
    }

    /**
     * Makes a new disk of {@code sizeMiB} for a sandbox and mounts its overlay over {@code lowers} (topmost first);
     * true when the disk was a spare image ({@link SpareDisks}).
     */
    boolean mountOnNewDisk(List<Path> lowers, SandboxDirs dirs, int sizeMiB)
            throws IOException, CommandFailedException, InterruptedException {
        boolean spare = disks.create(dirs, sizeMiB);
        overlays.mount(lowers, dirs.upper(), dirs.work(), dirs.rootfs());
        return spare;
    }

    /** Unmounts a sandbox's overlay, then its disk (nothing to do for what is not mounted). */
    void unmountRootfs(SandboxDirs dirs) throws IOException, CommandFailedException, InterruptedException {
        overlays.unmount(dirs.rootfs());
        disks.unmount(dirs);
    }

    /**
     * The OCI config of one sandbox: tini as PID 1 runs {@link EnvdLayout#ENVD_SUPERVISOR}, which keeps envd running as root (it
     * switches users per process) on the read-only JDK, listening on {@link EnvdLayout#ENVD_PORT} and on the unix socket in the
     * per-sandbox host dir.
     *
     * @param extraEnv extra environment of the init (the custom extension's boot arguments), KEY=value entries
     */
    ContainerSpec spec(ContainerId id, SandboxDirs dirs, NetSlot slot, String hostname, Lineage lineage,
                       Resources resources, List<String> extraEnv) {
        return spec(id, dirs, slot, hostname, lineage, resources, extraEnv, List.of());
    }

    /** {@link #spec}, with extra arguments for the first envd the init starts (see {@link EnvdLayout#envdSupervisor}). */
    ContainerSpec spec(ContainerId id, SandboxDirs dirs, NetSlot slot, String hostname, Lineage lineage,
                       Resources resources, List<String> extraEnv, List<String> firstEnvdArgs) {
        Path java = settings.jdkHome().resolve("bin/java");
        List<String> args = List.of("/usr/bin/tini", "-s", "--", "/bin/sh", "-c", EnvdLayout.envdSupervisor(firstEnvdArgs),
                java.toString(), "@" + EnvdLayout.ENVD_DIST + "/jvm.options", "-XX:AOTCache=" + EnvdLayout.ENVD_DIST + "/envd.aot",
                "-jar", EnvdLayout.ENVD_DIST + "/agentenv-envd.jar",
                "--port", Integer.toString(EnvdLayout.ENVD_PORT), "--unix-socket", EnvdLayout.ENVD_GUEST_DIR + "/" + EnvdLayout.ENVD_SOCKET,
                "--journal-file", EnvdLayout.ENVD_JOURNAL);
        List<String> env = new ArrayList<>(List.of(PATH, "HOME=/root"));
        env.addAll(extraEnv);
        return new ContainerSpec(id, dirs.rootfs(), hostname,
                new ContainerSpec.InitProcess(args, env, "/", 0, 0),
                slot.netnsPath(),
                new ContainerSpec.Limits(resources.cpuCount(), resources.memoryMiB(), settings.pids(), 16384),
                Optional.of(settings.jdkHome()),
                List.of(new ContainerSpec.ReadOnlyBind(lineage.envdDir(), EnvdLayout.ENVD_DIST),
                        new ContainerSpec.ReadOnlyBind(dirs.procFiles(), GuestProcFiles.GUEST_DIR)),
                dirs.envd(), EnvdLayout.ENVD_GUEST_DIR,
                Optional.of(layout.resolvConf()),
                criuConfig,
                settings.privileges());
    }

    /** Sets the UTS hostname of a running container from the host (a restored one keeps its checkpoint's). */
    void setHostname(long initPid, String hostname) throws IOException, InterruptedException {
        hostnames.set(initPid, hostname);
    }

    /**
     * Copies owned layers {@code from/<old>} to {@code to/<new>}: hard links where both are on one filesystem (layers
     * are never written to, so sharing inodes is safe and the cost grows with the number of files, not their size),
     * else a full copy.
     */
    void copyLayers(Path from, Path to, List<String[]> renames) throws IOException, CommandFailedException, InterruptedException {
        if (renames.isEmpty()) {
            return;
        }
        Files.createDirectories(to);
        for (String[] rename : renames) {
            Path source = from.resolve(rename[0]);
            Path target = to.resolve(rename[1]);
            try {
                runner.run(Command.of(FILE_TIMEOUT, "cp", "-a", "-l", source.toString(), target.toString()));
            } catch (CommandFailedException crossDevice) {
                FileTrees.deleteTree(target);
                runner.run(Command.of(FILE_TIMEOUT, "cp", "-a", "--reflink=auto", source.toString(), target.toString()));
            }
        }
    }

    /** Moves a directory (a rename on one filesystem, else copy and delete); nothing to do when it does not exist. */
    void move(Path from, Path to) throws IOException, CommandFailedException, InterruptedException {
        if (!Files.exists(from, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.createDirectories(to.getParent());
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException crossDevice) {
            FileTrees.deleteTree(to);
            runner.run(Command.of(FILE_TIMEOUT, "cp", "-a", from.toString(), to.toString()));
            FileTrees.deleteTree(from);
        } catch (FileSystemException e) {
            if (e.getMessage() != null && e.getMessage().contains("cross-device")) {
                FileTrees.deleteTree(to);
                runner.run(Command.of(FILE_TIMEOUT, "cp", "-a", from.toString(), to.toString()));
                FileTrees.deleteTree(from);
            } else {
                throw e;
            }
        }
    }

    /**
     * The last lines of envd's log inside a sandbox's filesystem, for error messages. Only for filesystems no user code
     * has written yet (a template's boot, a launch from a template): a sandbox's own files are untrusted, and a symlink
     * there must never make the host read one of its own files. Even so the path must resolve inside the upper dir.
     */
    static String envdLogTail(SandboxDirs dirs) {
        Path logFile = dirs.upper().resolve(EnvdLayout.ENVD_LOG.substring(1));
        try {
            if (!Files.isRegularFile(logFile, LinkOption.NOFOLLOW_LINKS)
                    || !logFile.toRealPath().startsWith(dirs.upper().toRealPath())) {
                return "(no envd log)";
            }
            List<String> lines = RuncLogs.tailLines(logFile, 64 * 1024); // bounded: a wedged envd can log without end
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
        } catch (IOException | RuntimeException e) {
            return "(envd log unreadable: " + e.getMessage() + ")";
        }
    }
}
