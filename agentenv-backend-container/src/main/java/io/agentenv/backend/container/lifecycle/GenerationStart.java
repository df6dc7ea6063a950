package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.guest.GuestProcFiles;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.UtsHostname;
import io.agentenv.backend.container.network.EgressFirewall;
import io.agentenv.backend.container.network.EgressPolicy;
import io.agentenv.backend.container.network.NetSlot;
import io.agentenv.backend.container.runtime.RuncRuntime;
import io.agentenv.backend.container.storage.LayerFiles;
import io.agentenv.backend.container.storage.OverlayMounts;
import io.agentenv.backend.container.storage.SandboxDisks;
import io.agentenv.backend.container.storage.SandboxRootfs;
import io.agentenv.envd.client.EnvdClient;
import io.agentenv.envd.client.EnvdClients;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdInit;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.PauseMode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Boots or restores a generation according to its {@link ContainerSandbox.Launch}: a warm-pool claim, a cold boot
 * with boot arguments, a restore of the template's, a snapshot's or the sandbox's own paused checkpoint. A failed
 * resume moves the paused files back so the paused state stays resumable.
 */
public final class GenerationStart {

    private static final Logger log = LoggerFactory.getLogger(GenerationStart.class);

    private final ContainerNames names;
    private final TemplateImages templates;
    private final SandboxSpecs specs;
    private final RuncRuntime runc;
    private final SandboxDisks disks;
    private final OverlayMounts overlays;
    private final SandboxRootfs sandboxRootfs;
    private final LayerFiles layerFiles;
    private final EgressFirewall firewall;
    private final UtsHostname hostnames;
    private final EnvdClients envdClients;
    private final DeferredReleases deferredReleases;
    private final Clock clock;

    public GenerationStart(
            ContainerNames names,
            TemplateImages templates,
            SandboxSpecs specs,
            RuncRuntime runc,
            SandboxDisks disks,
            OverlayMounts overlays,
            SandboxRootfs sandboxRootfs,
            LayerFiles layerFiles,
            EgressFirewall firewall,
            UtsHostname hostnames,
            EnvdClients envdClients,
            DeferredReleases deferredReleases,
            Clock clock) {
        this.names = requireNonNull(names, "names is null");
        this.templates = requireNonNull(templates, "templates is null");
        this.specs = requireNonNull(specs, "specs is null");
        this.runc = requireNonNull(runc, "runc is null");
        this.disks = requireNonNull(disks, "disks is null");
        this.overlays = requireNonNull(overlays, "overlays is null");
        this.sandboxRootfs = requireNonNull(sandboxRootfs, "sandboxRootfs is null");
        this.layerFiles = requireNonNull(layerFiles, "layerFiles is null");
        this.firewall = requireNonNull(firewall, "firewall is null");
        this.hostnames = requireNonNull(hostnames, "hostnames is null");
        this.envdClients = requireNonNull(envdClients, "envdClients is null");
        this.deferredReleases = requireNonNull(deferredReleases, "deferredReleases is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    /** Waits until the last pause of this sandbox has released everything (see {@link DeferredReleases}). */
    private void awaitPauseRelease(Generation gen) throws BackendException {
        long waiting = System.nanoTime();
        try {
            deferredReleases.await(gen.spec.id());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Recoverable(
                    "interrupted while waiting for sandbox " + gen.spec.id() + " to be released from its pause", e);
        }
        long waited = (System.nanoTime() - waiting) / 1_000_000;
        if (waited > 0) {
            log.atInfo()
                    .addKeyValue("sandbox_id", gen.spec.id().value())
                    .addKeyValue("waited_ms", waited)
                    .log("resume waited for its pause's release");
        }
    }

    void extraBootArgs(Generation gen, String arguments) throws BackendException {
        requireNonNull(arguments, "arguments is null");
        if (!(gen.launch instanceof ContainerSandbox.Launch.FromTemplate)
                || gen.phase.get() != ContainerSandbox.Phase.PREPARED) {
            throw new BackendException.Recoverable("boot arguments apply only to a fresh launch before start");
        }
        if (arguments.isBlank() || arguments.indexOf('\0') >= 0 || arguments.length() > 4096) {
            throw new BackendException.Recoverable("boot arguments must be 1..4096 characters without NUL");
        }
        gen.bootEnv(List.of("AENV_EXTRA_BOOT_ARGS=" + arguments));
    }

    void start(Generation gen, Duration readyTimeout) throws BackendException {
        var warm = gen.warm;
        var bootEnv = gen.bootEnv();
        var spec = gen.spec;
        var dirs = gen.dirs;
        var launch = gen.launch;
        if (!gen.phase.compareAndSet(ContainerSandbox.Phase.PREPARED, ContainerSandbox.Phase.STARTING)) {
            throw new BackendException.Terminal("sandbox " + spec.id() + " cannot start from " + gen.phase.get());
        }
        Instant deadline = clock.instant().plus(readyTimeout);
        long started = System.nanoTime();
        if (launch instanceof ContainerSandbox.Launch.FromPaused) {
            awaitPauseRelease(gen); // the restore reuses the container id and the sandbox dir the pause's release frees
        }
        String newDisk = "none"; // a new disk for this start: a spare image, made now, or none (warm member, resume)
        // rootfs_ms: that disk made or taken and mounted, and the overlay mounted on it
        long diskNanos = 0;
        long envdNanos = 0; // envd_ms: envd healthy (not for a claim: its envd was ready in the pool) and initialised
        try {
            // a template's checkpoint and the pool's members have no mount at a volume's path (CRIU restores the
            // mounts it dumped, nothing more): a sandbox with volumes boots afresh from its template, its volumes in
            // the config; a snapshot or pause of one names them in its checkpoint, and its launch must name the same.
            // A snapshot saved without volumes (a built template, say) cannot take them into its checkpoint: a
            // sandbox created from it with volumes boots afresh from the snapshot's files
            boolean mountsVolumes = !spec.volumeMounts().isEmpty();
            boolean bootSnapshotFiles = mountsVolumes
                    && launch instanceof ContainerSandbox.Launch.FromSnapshot(SavedStates.Snapshot saved)
                    && saved.volumePaths().isEmpty();
            if (!bootSnapshotFiles) {
                requireSameVolumes(launch, spec);
            }
            boolean claimWarm = warm.isPresent() && bootEnv.isEmpty() && !mountsVolumes;
            // a member made for this very sandbox: its container, hostname and instance.json are this sandbox's
            boolean ownMember = warm.isPresent() && warm.get().sandbox().equals(spec.id());
            Optional<Path> images;
            Optional<AccessToken> guestToken;
            if (warm.isPresent() && !claimWarm) {
                discardWarmContainer(gen); // booted without the boot arguments: boot afresh in the same dirs and slot
            }
            Lineage lineage;
            switch (launch) {
                case ContainerSandbox.Launch.FromTemplate(String template)
                when claimWarm -> {
                    lineage = warm.get().lineage();
                    images = Optional.empty();
                    guestToken = Optional.empty();
                }
                case ContainerSandbox.Launch.FromTemplate(String template)
                when !bootEnv.isEmpty() || mountsVolumes -> {
                    lineage = new Lineage(List.of(), templates.rootfs(template), templates.envdDir());
                    images = Optional.empty();
                    guestToken = Optional.empty();
                }
                case ContainerSandbox.Launch.FromTemplate(String template) -> {
                    TemplateImages.Image image = templates.image(template);
                    lineage = image.lineage();
                    images = Optional.of(image.images());
                    guestToken = Optional.empty();
                }
                case ContainerSandbox.Launch.FromSnapshot(SavedStates.Snapshot state)
                when claimWarm -> { // a warm restore of this snapshot: its layers and checkpoint are in place
                    lineage = warm.get().lineage();
                    images = Optional.empty();
                    guestToken = Optional.empty();
                }
                case ContainerSandbox.Launch.FromSnapshot(SavedStates.Snapshot state) -> {
                    lineage = templates.localize(state.lineage(), state.files());
                    SavedStates.requirePresent(lineage, state.layers(), Optional.of(state.images()));
                    layerFiles.copyLayers(
                            state.layers(),
                            dirs.layers(),
                            lineage.owned().stream()
                                    .map(n -> new String[] {n, n})
                                    .toList());
                    images = bootSnapshotFiles ? Optional.empty() : Optional.of(state.images());
                    guestToken = bootSnapshotFiles ? Optional.empty() : state.guestToken();
                }
                case ContainerSandbox.Launch.FromPaused(SavedStates.Paused state) -> {
                    boolean memory = state.mode() == PauseMode.WITH_MEMORY;
                    lineage = templates.localize(state.lineage(), state.files());
                    SavedStates.requirePresent(
                            lineage, state.layers(), memory ? Optional.of(state.images()) : Optional.empty());
                    if (Files.isRegularFile(state.diskImage())) {
                        disks.moveImage(state.diskImage(), dirs.diskImage());
                        disks.mount(dirs);
                    } else { // paused before sandboxes had their own disk: its upper moves onto a new one
                        disks.create(dirs, gen.resources.diskSizeMiB());
                        layerFiles.move(state.upper(), dirs.upper());
                    }
                    layerFiles.move(state.layers(), dirs.layers());
                    images = memory ? Optional.of(state.images()) : Optional.empty();
                    guestToken = memory ? Optional.of(spec.accessToken()) : Optional.empty();
                }
                case ContainerSandbox.Launch.Reattached r ->
                    throw new BackendException.Terminal("a re-attached sandbox is already running");
            }
            gen.lineage(lineage);
            NetSlot netSlot = gen.requireSlot();
            if (warm.isPresent() && !ownMember) {
                names.claim(
                        spec.id(), gen.id); // this sandbox runs in the member's container (restart recovery finds it)
            }
            applyInitialEgress(gen, netSlot);
            Optional<UtsHostname.Pending> hostname = Optional.empty();
            if (claimWarm) { // set while envd takes its /init (below): both are short, and neither needs the other
                Optional<GenerationLiveness.Processes> claimedProcesses =
                        warm.get().processes();
                gen.claimedProcesses(claimedProcesses);
                if (!ownMember) {
                    long initPid = claimedProcesses.isPresent()
                            ? claimedProcesses.get().init().pid()
                            : gen.initPid();
                    hostname = Optional.of(hostnames.start(initPid, spec.id().value()));
                }
            } else {
                if (launch instanceof ContainerSandbox.Launch.FromPaused) { // its own disk is mounted again above
                    overlays.mount(lineage.lowers(dirs.layers()), dirs.upper(), dirs.work(), dirs.rootfs());
                } else {
                    long mounting = System.nanoTime();
                    newDisk = sandboxRootfs.mountOnNewDisk(
                                    lineage.lowers(dirs.layers()), dirs, gen.resources.diskSizeMiB())
                            ? "spare"
                            : "made";
                    diskNanos = System.nanoTime() - mounting;
                }
                specs.makeEnvdDir(dirs); // on the disk mounted above (a claimed member's was made by the pool)
                GuestProcFiles.writeBootId(
                        dirs,
                        switch (launch) { // see GuestProcFiles: which launch is a new boot
                            case ContainerSandbox.Launch.FromSnapshot(SavedStates.Snapshot state)
                            when images.isPresent() -> state.bootId().orElseGet(GuestProcFiles::newBootId);
                            case ContainerSandbox.Launch.FromPaused(SavedStates.Paused state)
                            when images.isPresent() -> state.bootId().orElseGet(GuestProcFiles::newBootId);
                            default -> GuestProcFiles.newBootId();
                        });
                RuncRuntime.writeConfig(
                        dirs.bundle(),
                        specs.build(
                                gen.id,
                                dirs,
                                netSlot,
                                spec.id().value(),
                                lineage,
                                gen.resources,
                                bootEnv,
                                List.of(),
                                spec.volumeMounts()));
            }
            if (claimWarm) {
                // restored by the pool; envd answers and waits for its /init
            } else if (images.isPresent()) {
                runc.restore(gen.id, dirs.bundle(), images.get(), dirs.restoreWork());
                if (!(launch instanceof ContainerSandbox.Launch.FromPaused)) {
                    hostnames.set(gen.initPid(), spec.id().value());
                }
            } else {
                runc.create(gen.id, dirs.bundle());
                GuestProcFiles.mount(gen.initPid(), dirs); // a cold boot; a restore has these mounts in its images
                runc.start(gen.id);
            }
            long envdStarted = System.nanoTime();
            if (claimWarm) {
                if (ownMember && initialisedFor(warm.get(), spec)) {
                    gen.initialisedAtStart(false);
                } else {
                    initClaimed(gen, gen.client(), initFor(spec, clock), deadline);
                }
            } else {
                EnvdClient opened = envdClients.open(spec.id(), ContainerSandbox.envdAddress(netSlot), guestToken);
                gen.client(opened);
                opened.waitUntilHealthy(deadline);
                opened.init(initFor(spec, clock));
            }
            if (hostname.isPresent()) {
                hostname.get().await();
            }
            envdNanos = System.nanoTime() - envdStarted;
            if (!claimWarm) { // a member's was written when it was made: the same lineage and slot
                InstanceFile.write(dirs, lineage, netSlot.index());
            }
        } catch (IOException | CommandFailedException | EnvdException | RuntimeException e) {
            rollBackPausedFiles(gen);
            // a template launch's files are the template's and envd's only; any other launch's are the user's
            // (untrusted)
            String envdLog = launch instanceof ContainerSandbox.Launch.FromTemplate
                    ? EnvdLogs.tail(dirs)
                    : "(not read: user files)";
            throw new BackendException.Terminal(
                    "sandbox " + spec.id() + " did not start ("
                            + launch.getClass().getSimpleName() + "): " + e.getMessage() + "\nenvd log:\n" + envdLog,
                    e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            rollBackPausedFiles(gen);
            throw new BackendException.Terminal("interrupted while starting sandbox " + spec.id(), e);
        }
        if (!gen.phase.compareAndSet(ContainerSandbox.Phase.STARTING, ContainerSandbox.Phase.RUNNING)) {
            throw new BackendException.Terminal("sandbox " + spec.id() + " was closed while starting");
        }
        log.atInfo()
                .addKeyValue("sandbox_id", spec.id().value())
                .addKeyValue("launch", launch.getClass().getSimpleName())
                .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                .addKeyValue("new_disk", newDisk)
                .addKeyValue("rootfs_ms", diskNanos / 1_000_000)
                .addKeyValue("envd_ms", envdNanos / 1_000_000)
                .log("container sandbox started");
    }

    /**
     * Fails when a launch from a checkpoint names other volume paths than the checkpoint holds mounts for: CRIU would
     * fail on a mount it has no source for, or the sandbox would come up without a volume it had.
     */
    private static void requireSameVolumes(ContainerSandbox.Launch launch, LaunchSpec spec) throws BackendException {
        List<String> held = switch (launch) {
            case ContainerSandbox.Launch.FromSnapshot(SavedStates.Snapshot state) -> state.volumePaths();
            case ContainerSandbox.Launch.FromPaused(SavedStates.Paused state) -> state.volumePaths();
            default -> null;
        };
        if (held == null) {
            return;
        }
        List<String> named = SavedStates.volumePaths(spec.volumeMounts());
        if (!new HashSet<>(held).equals(new HashSet<>(named))) {
            throw new BackendException.Terminal("sandbox " + spec.id() + " was saved mounting volumes at " + held
                    + ", and its launch names " + named);
        }
    }

    /**
     * Whether the member's envd has exactly what this sandbox's {@code /init} would set: its token, env vars, default
     * user and workdir (the member's {@link WarmPool.MemberDefaults}), and it is still the envd the pool initialised
     * (one {@code /proc} read; a successor started by the supervisor has no init yet).
     */
    private static boolean initialisedFor(WarmPool.Member member, LaunchSpec spec) throws IOException {
        return spec.envVars().equals(member.defaults().envVars())
                && spec.defaultUser().equals(member.defaults().user())
                && spec.defaultWorkdir()
                        .or(() -> workdir(spec.defaultUser()))
                        .equals(member.defaults().workdir())
                && member.token().equals(Optional.of(spec.accessToken()))
                && member.processes()
                        .flatMap(GenerationLiveness.Processes::envd)
                        .isPresent()
                && member.processes().get().envd().get().running();
    }

    /**
     * The claimed member's {@code /init}, on the client the pool kept (its envd answered {@code /ready} there, so no
     * {@code /health} probe first). If envd cannot be reached (it died in the pool and its supervisor is starting it
     * again), it is waited for until {@code deadline} as a booting envd would be, and initialised then.
     */
    private void initClaimed(Generation gen, EnvdClient client, EnvdInit init, Instant deadline) throws EnvdException {
        try {
            client.init(init);
        } catch (EnvdException.Unreachable gone) {
            log.atWarn()
                    .addKeyValue("sandbox_id", gen.spec.id().value())
                    .setCause(gone)
                    .log("the claimed warm sandbox's envd did not answer its init; waiting for it");
            client.waitUntilHealthy(deadline);
            client.init(init);
        }
    }

    /**
     * The spec's egress rules, before the sandbox's processes run (a claimed member's envd has not been initialised,
     * so nothing of the user's runs yet). A slot is new for every generation and has no rules of its own, so an open
     * policy needs no firewall change at all.
     */
    private void applyInitialEgress(Generation gen, NetSlot netSlot)
            throws CommandFailedException, InterruptedException {
        EgressPolicy policy = ContainerSandbox.egress(gen.spec.network());
        if (!policy.isOpen()) {
            firewall.apply(netSlot, policy);
        }
    }

    /** Stops the warm member's container and removes its disk and work files, keeping the slot. */
    private void discardWarmContainer(Generation gen) throws IOException, CommandFailedException, InterruptedException {
        gen.closeClient();
        runc.delete(gen.id);
        sandboxRootfs.unmount(gen.dirs);
        Files.deleteIfExists(gen.dirs.diskImage());
        FileTrees.deleteTree(gen.dirs.restoreWork());
    }

    /**
     * A resume that failed must leave the paused state resumable: stop what was started and move the disk image (or,
     * for a state paused before sandboxes had disks, the upper) and the layers back into the artifact dir before
     * close() deletes the sandbox dir.
     */
    private void rollBackPausedFiles(Generation gen) {
        if (!(gen.launch instanceof ContainerSandbox.Launch.FromPaused(SavedStates.Paused state))) {
            return;
        }
        try {
            gen.closeClient();
            runc.delete(gen.id);
            overlays.unmount(gen.dirs.rootfs());
            disks.unmount(gen.dirs);
            // An older state's upper still in the artifact dir was not (fully) copied: it stays as it is. Else the disk
            // holds the sandbox's files (the state's own image, or a new one its older upper was copied onto).
            if (!Files.exists(state.upper()) && Files.exists(gen.dirs.diskImage())) {
                disks.moveImage(gen.dirs.diskImage(), state.diskImage());
            }
            layerFiles.move(gen.dirs.layers(), state.layers());
        } catch (IOException | CommandFailedException e) {
            log.atError()
                    .addKeyValue("sandbox_id", gen.spec.id().value())
                    .setCause(e)
                    .log("could not move the paused files back after a failed resume");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** envd's {@code /init} for this sandbox: its token, env vars, default user and workdir, and the host's clock. */
    static EnvdInit initFor(LaunchSpec spec, Clock clock) {
        return new EnvdInit(
                Optional.of(spec.accessToken()),
                spec.envVars(),
                Optional.of(spec.defaultUser()),
                spec.defaultWorkdir().or(() -> workdir(spec.defaultUser())),
                clock.instant());
    }

    static Optional<String> workdir(String user) {
        return switch (user) {
            case "user" -> Optional.of("/home/user"); // E2B's base template contract
            case "root" -> Optional.of("/root");
            default -> Optional.empty(); // envd uses the user's home
        };
    }
}
