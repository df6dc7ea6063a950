package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.guest.EnvdLayout;
import io.agentenv.backend.container.guest.GuestProcFiles;
import io.agentenv.backend.container.guest.GuestRuntime;
import io.agentenv.backend.container.guest.LxcfsViews;
import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.network.NetSlot;
import io.agentenv.backend.container.runtime.ContainerSpec;
import io.agentenv.backend.container.runtime.OciSpec;
import io.agentenv.backend.container.runtime.OciSpecs;
import io.agentenv.backend.container.storage.SandboxDirs;
import io.agentenv.spi.Resources;
import io.agentenv.spi.VolumeMount;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The OCI config of this backend's sandboxes: tini as PID 1 runs {@link EnvdLayout#ENVD_SUPERVISOR}, which keeps envd
 * running as root (it switches users per process) on the read-only JDK (tini, the shell, and the JDK's loader and
 * libraries from the {@link GuestRuntime}, never from the image), listening on {@link EnvdLayout#ENVD_PORT} and
 * on the unix socket in the per-sandbox host dir; the settings' JDK, pids limit and privileges, the host's
 * resolv.conf and the backend's CRIU config.
 */
public final class SandboxSpecs {

    private static final String PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    private final ContainerSettings settings;
    private final OciSpecs ociSpecs;
    private final Path resolvConf;
    private final Path criuConfig;

    public SandboxSpecs(ContainerSettings settings, OciSpecs ociSpecs, Path resolvConf, Path criuConfig) {
        this.settings = requireNonNull(settings, "settings is null");
        this.ociSpecs = requireNonNull(ociSpecs, "ociSpecs is null");
        this.resolvConf = requireNonNull(resolvConf, "resolvConf is null");
        this.criuConfig = requireNonNull(criuConfig, "criuConfig is null");
    }

    /**
     * Makes the sandbox's envd host dir (bound at {@link EnvdLayout#ENVD_GUEST_DIR}) on its disk, empty and owned by
     * the guest's root: envd makes its unix socket there, as root of the sandbox's user namespace. Called once the disk
     * is mounted (a resumed disk still holds the previous envd's socket, which is removed). runc binds the dir as the
     * guests' root, so the disk's root dir lets that id pass (as its group, search only); no other host user does.
     */
    void makeEnvdDir(SandboxDirs dirs) throws IOException {
        int root = settings.guestIds().host(0);
        Path disk = Files.createDirectories(dirs.disk());
        Files.setAttribute(disk, "unix:gid", root);
        Files.setPosixFilePermissions(disk, PosixFilePermissions.fromString("rwx--x---"));
        Path dir = dirs.envd();
        if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            FileTrees.deleteTree(dir);
        }
        Files.createDirectory(dir);
        Files.setAttribute(dir, "unix:uid", root);
        Files.setAttribute(dir, "unix:gid", root);
    }

    /**
     * The OCI config of one sandbox, for a create or restore that follows at once.
     *
     * @param extraEnv extra environment of the init (the custom extension's boot arguments), KEY=value entries
     * @throws LxcfsViews.UnavailableException when the LXCFS files it binds cannot be bound (the launch would fail in
     *     runc, which names only the file it could not stat)
     */
    OciSpec build(
            ContainerId id,
            SandboxDirs dirs,
            NetSlot slot,
            String hostname,
            Lineage lineage,
            Resources resources,
            List<String> extraEnv)
            throws LxcfsViews.UnavailableException {
        ociSpecs.requireBindSources();
        return ociSpecs.build(spec(id, dirs, slot, hostname, lineage, resources, extraEnv, List.of(), List.of()));
    }

    /**
     * {@link #build}, with extra arguments for the first envd the init starts (see {@link EnvdLayout#envdSupervisor})
     * and the sandbox's volumes. Every launch of a sandbox that mounts volumes (and of a snapshot or fork of it: its
     * checkpoint names them) must name the same ones.
     */
    OciSpec build(
            ContainerId id,
            SandboxDirs dirs,
            NetSlot slot,
            String hostname,
            Lineage lineage,
            Resources resources,
            List<String> extraEnv,
            List<String> firstEnvdArgs,
            List<VolumeMount> volumes)
            throws LxcfsViews.UnavailableException {
        ociSpecs.requireBindSources();
        return ociSpecs.build(spec(id, dirs, slot, hostname, lineage, resources, extraEnv, firstEnvdArgs, volumes));
    }

    ContainerSpec spec(
            ContainerId id,
            SandboxDirs dirs,
            NetSlot slot,
            String hostname,
            Lineage lineage,
            Resources resources,
            List<String> extraEnv,
            List<String> firstEnvdArgs,
            List<VolumeMount> volumes) {
        Path java = settings.jdkHome().resolve("bin/java");
        List<String> args = List.of(
                GuestRuntime.TINI,
                "-s",
                "--",
                GuestRuntime.SHELL,
                "-c",
                EnvdLayout.envdSupervisor(firstEnvdArgs),
                GuestRuntime.JAVA,
                "--library-path",
                GuestRuntime.LIB,
                java.toString(),
                "@" + EnvdLayout.ENVD_DIST + "/jvm.options",
                // the JDK's default launch goes through jspawnhelper, a program of the JDK that the image's loader
                // would run: a fork from the JVM needs no program of the JDK's libc
                "-Djdk.lang.Process.launchMechanism=FORK",
                "-XX:AOTCache=" + EnvdLayout.ENVD_DIST + "/envd.aot",
                "-jar",
                EnvdLayout.ENVD_DIST + "/agentenv-envd.jar",
                "--port",
                Integer.toString(EnvdLayout.ENVD_PORT),
                "--unix-socket",
                EnvdLayout.ENVD_GUEST_DIR + "/" + EnvdLayout.ENVD_SOCKET,
                "--journal-file",
                EnvdLayout.ENVD_JOURNAL,
                "--fallback-shell",
                GuestRuntime.SHELL);
        List<String> env = new ArrayList<>(List.of(PATH, "HOME=/root"));
        env.addAll(extraEnv);
        return new ContainerSpec(
                id,
                dirs.rootfs(),
                hostname,
                new ContainerSpec.InitProcess(args, env, "/", 0, 0, GuestRuntime.SHELL),
                new ContainerSpec.Network(slot.hostVeth(), slot.sandboxAddress(), slot.hostAddress(), slot.netnsPath()),
                settings.guestIds(),
                new ContainerSpec.Limits(resources.cpuCount(), resources.memoryMiB(), settings.pids(), 16384),
                Optional.of(settings.jdkHome()),
                List.of(
                        new ContainerSpec.ReadOnlyBind(lineage.envdDir(), EnvdLayout.ENVD_DIST),
                        new ContainerSpec.ReadOnlyBind(dirs.procFiles(), GuestProcFiles.GUEST_DIR)),
                dirs.envd(),
                EnvdLayout.ENVD_GUEST_DIR,
                Optional.of(resolvConf),
                criuConfig,
                settings.privileges(),
                volumes);
    }
}
