package io.agentenv.backend.container;

import io.agentenv.backend.container.guest.GuestMounts;
import io.agentenv.backend.container.guest.GuestRuntime;
import io.agentenv.backend.container.guest.LxcfsViews;
import io.agentenv.backend.container.host.CgroupTree;
import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.GuestPassage;
import io.agentenv.backend.container.host.HostLayout;
import io.agentenv.backend.container.host.InitReaper;
import io.agentenv.backend.container.host.JdkProcessRunner;
import io.agentenv.backend.container.host.ProcessRunner;
import io.agentenv.backend.container.host.TextDigest;
import io.agentenv.backend.container.host.UtsHostname;
import io.agentenv.backend.container.leftovers.LeftoverReaper;
import io.agentenv.backend.container.lifecycle.ContainerNames;
import io.agentenv.backend.container.lifecycle.ContainerSandbox;
import io.agentenv.backend.container.lifecycle.ContainerSandboxes;
import io.agentenv.backend.container.lifecycle.ContainerSettings;
import io.agentenv.backend.container.lifecycle.DeferredReleases;
import io.agentenv.backend.container.lifecycle.GenerationCapture;
import io.agentenv.backend.container.lifecycle.GenerationPause;
import io.agentenv.backend.container.lifecycle.GenerationRelease;
import io.agentenv.backend.container.lifecycle.GenerationStart;
import io.agentenv.backend.container.lifecycle.InstanceFile;
import io.agentenv.backend.container.lifecycle.LineageFiles;
import io.agentenv.backend.container.lifecycle.SandboxSpecs;
import io.agentenv.backend.container.lifecycle.SavedStates;
import io.agentenv.backend.container.lifecycle.TemplateDirs;
import io.agentenv.backend.container.lifecycle.TemplateImages;
import io.agentenv.backend.container.lifecycle.WarmPool;
import io.agentenv.backend.container.network.EgressFirewall;
import io.agentenv.backend.container.network.NetSlot;
import io.agentenv.backend.container.network.NetnsPool;
import io.agentenv.backend.container.runtime.ContainerState;
import io.agentenv.backend.container.runtime.CpuSets;
import io.agentenv.backend.container.runtime.OciSpecs;
import io.agentenv.backend.container.runtime.RuncRuntime;
import io.agentenv.backend.container.storage.IdmappedViews;
import io.agentenv.backend.container.storage.LayerCapture;
import io.agentenv.backend.container.storage.LayerFiles;
import io.agentenv.backend.container.storage.OverlayMounts;
import io.agentenv.backend.container.storage.SandboxDisks;
import io.agentenv.backend.container.storage.SandboxRootfs;
import io.agentenv.backend.container.storage.SpareDisks;
import io.agentenv.envd.client.EnvdClientSettings;
import io.agentenv.envd.client.EnvdClients;
import io.agentenv.spi.BackendCapacity;
import io.agentenv.spi.BackendContext;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdTokens;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.Reservation;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.SharedFiles;
import io.agentenv.spi.SnapshotState;
import io.agentenv.spi.TemplateDescriptor;
import io.agentenv.spi.TemplateId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code container} backend (AENV_BACKEND=container): runc containers on overlayfs, one pooled network namespace
 * and one cgroup each, checkpointed and restored with CRIU. The composition root of this module: {@link #initialize}
 * checks the host (scripts/setup-host.sh must have run) and wires the building blocks; see docs/container-backend.md
 * for the design and settings.
 */
public final class ContainerBackendFactory implements SandboxBackendFactory {

    private static final Logger log = LoggerFactory.getLogger(ContainerBackendFactory.class);
    private static final List<String> ENVD_FILES = List.of("agentenv-envd.jar", "jvm.options", "envd.aot");
    /** The longest a create with no free slot waits for kills' and pauses' releases to free one. */
    private static final Duration SLOT_RELEASE_WAIT = Duration.ofSeconds(5);

    private final Clock clock;
    private volatile TemplateDirs templateDirs;
    private final AtomicBoolean shutDown = new AtomicBoolean();
    /** Network slots a previous run left; re-attached sandboxes take theirs back, reapUnclaimed removes the rest. */
    private final Map<Integer, NetSlot> leftoverSlots = new ConcurrentHashMap<>();
    // Set by initialize before sandboxes (volatile), so whoever reads sandboxes as set sees them all.
    private ContainerSettings settings;
    private HostLayout layout;
    private ProcessRunner runner;
    private ContainerNames names;
    private RuncRuntime runc;
    private CgroupTree cgroups;
    private OverlayMounts overlays;
    private SandboxDisks disks;
    private EgressFirewall firewall;
    private NetnsPool pool;
    private EnvdClients envdClients;
    private IdmappedViews idmappedViews;
    private DeferredReleases deferredReleases;
    private UtsHostname hostnames;
    private InitReaper reaper;
    private WarmPool warmPool;
    private volatile ContainerSandboxes sandboxes;

    /** For ServiceLoader. */
    public ContainerBackendFactory() {
        this(Clock.systemUTC());
    }

    ContainerBackendFactory(Clock clock) {
        this.clock = clock;
    }

    @Override
    public String name() {
        return "container";
    }

    @Override
    public void initialize(BackendContext context) throws BackendException {
        ContainerSettings settings;
        try {
            settings = ContainerSettings.from(context.settings(), Path.of("").toAbsolutePath());
        } catch (IllegalArgumentException e) {
            throw new BackendException.Terminal("container backend: " + e.getMessage(), e);
        }
        Optional<String> unready = HostLayout.unreadyReason(settings.hostEnv());
        if (unready.isPresent()) {
            throw new BackendException.Terminal("container backend: this host cannot run sandboxes: " + unready.get()
                    + "; run scripts/setup-host.sh as root");
        }
        HostLayout layout;
        try {
            layout = HostLayout.load(settings.hostEnv());
        } catch (IOException | IllegalArgumentException e) {
            throw new BackendException.Terminal(
                    "container backend: cannot read " + settings.hostEnv() + ": " + e.getMessage()
                            + "; rerun scripts/setup-host.sh",
                    e);
        }
        int firstSlot = 0;
        if (settings.isolation().isPresent()) {
            ContainerSettings.Isolation isolation = settings.isolation().get();
            try {
                layout = layout.isolatedAs(isolation.namePrefix(), isolation.runDir(), isolation.cgroupParent());
            } catch (IllegalArgumentException e) {
                throw new BackendException.Terminal("container backend: " + e.getMessage(), e);
            }
            firstSlot = isolation.firstSlot();
        }
        initialize(context.workDir(), settings, layout, firstSlot, context.envdTokens(), context.sharedFiles());
    }

    /**
     * Wires the building blocks for {@code layout} (tests pass an isolated one) with network slots from
     * {@code firstSlot} on; leaves whatever a previous run left alone (see {@link #reattach} and {@link #reapUnclaimed}).
     *
     * @param envdTokens the server's envd token derivation: warm members are initialised for their own ids and
     *                   {@link #reserve} proposes them; without it creates claim members under their own ids
     * @param sharedFiles the cluster's storage for the template files states are made on ({@link LineageFiles});
     *                    empty for a lone server
     */
    void initialize(
            Path workDir,
            ContainerSettings settings,
            HostLayout layout,
            int firstSlot,
            Optional<EnvdTokens> envdTokens,
            Optional<SharedFiles> sharedFiles)
            throws BackendException {
        if (sandboxes != null) {
            throw new IllegalStateException("already initialized");
        }
        if (!Files.isExecutable(settings.jdkHome().resolve("bin/java"))) {
            throw new BackendException.Terminal("container backend: no JDK at " + settings.jdkHome()
                    + " (AENV_BACKEND_JDK_HOME); envd runs on a JDK 25 bound read-only into every sandbox");
        }
        for (String file : ENVD_FILES) {
            if (!Files.exists(settings.envdDir().resolve(file))) {
                throw new BackendException.Terminal("container backend: envd is not built: no "
                        + settings.envdDir().resolve(file)
                        + " (AENV_BACKEND_ENVD_DIR; build it with `mvn -pl agentenv-envd -am package`)");
            }
        }
        Optional<String> noDisks = SandboxDisks.unavailableReason();
        if (noDisks.isPresent()) {
            throw new BackendException.Terminal("container backend: this host cannot make sandbox disks: "
                    + noDisks.get() + "; run scripts/setup-host.sh as root");
        }
        LxcfsViews lxcfs = new LxcfsViews(settings.lxcfsDir());
        Optional<String> noViews = lxcfs.unavailableReason();
        if (noViews.isPresent()) { // sandboxes would fail to start, or show the host's memory and CPUs
            throw new BackendException.Terminal("container backend: sandboxes cannot get their own /proc views: "
                    + noViews.get() + "; run scripts/setup-host.sh as root (it starts lxcfs)");
        }
        InitReaper reaper = InitReaper.enable(Duration.ofSeconds(1), Duration.ofSeconds(5));
        ProcessRunner runner = new JdkProcessRunner();
        SpareDisks spares = new SpareDisks(
                (image, sizeMiB) -> SandboxDisks.format(runner, image, sizeMiB, true),
                workDir.resolve("spare-disks"),
                settings.spareDisks());
        boolean initialized = false;
        try {
            Files.createDirectories(workDir);
            GuestPassage.grant(runner, settings.guestIds(), workDir);
            Path sandboxesDir = Files.createDirectories(workDir.resolve("sandboxes"));
            spares.start(settings.diskMiB());
            EgressFirewall firewall = new EgressFirewall(runner);
            NetnsPool pool = new NetnsPool(
                    runner,
                    firewall,
                    layout,
                    firstSlot,
                    Math.min(settings.maxSandboxes(), layout.addressing().slotCount() - firstSlot));
            leftoverSlots.putAll(pool.adoptExisting());
            Path criuConfig = workDir.resolve("criu-runc.conf");
            Files.writeString(criuConfig, RuncRuntime.criuOptions(Files.readString(layout.criuRuncConfig())));
            ContainerNames containerNames =
                    new ContainerNames(settings.idPrefix(), sandboxesDir, workDir.resolve("claims"));
            SandboxSpecs specs = new SandboxSpecs(
                    settings,
                    new OciSpecs(
                            layout.cgroupParent(),
                            layout.swapAccounting(),
                            guestMounts(runner, settings, layout),
                            lxcfs,
                            CpuSets.of(layout.cgroupRoot().resolve("cpuset"), layout.cgroupParent())),
                    layout.resolvConf(),
                    criuConfig);
            idmappedViews = new IdmappedViews(workDir.resolve("idmapped"), settings.guestIds());
            OverlayMounts overlayMounts = new OverlayMounts(idmappedViews);
            SandboxDisks sandboxDisks = new SandboxDisks(runner, spares);
            SandboxRootfs rootfs = new SandboxRootfs(sandboxDisks, overlayMounts);
            LayerFiles layerFiles = new LayerFiles(runner);
            RuncRuntime runcRuntime = new RuncRuntime(runner, layout, Duration.ofSeconds(30), settings.criuTimeout());
            CgroupTree cgroupTree = new CgroupTree(layout);
            envdClients = new EnvdClients(EnvdClientSettings.DEFAULTS, clock);
            DeferredReleases releases = new DeferredReleases();
            UtsHostname utsHostname = new UtsHostname();
            TemplateDirs templateDirs = new TemplateDirs(layout.templatesDir(), workDir.resolve("image-templates"));
            LineageFiles lineageFiles = new LineageFiles(sharedFiles, workDir.resolve("shared-files"));
            Path envd = privateEnvdCopy(
                    runner,
                    settings.envdDir(),
                    new GuestRuntime(runner, settings.jdkHome(), GuestRuntime.Sources.DEBIAN),
                    workDir.resolve("envd"));
            TemplateImages templates = new TemplateImages(
                    settings,
                    containerNames,
                    specs,
                    runcRuntime,
                    pool,
                    firewall,
                    overlayMounts,
                    rootfs,
                    layerFiles,
                    envdClients,
                    workDir.resolve("templates"),
                    envd,
                    templateDirs,
                    lineageFiles,
                    clock);
            warmPool = new WarmPool(
                    settings.resources(),
                    containerNames,
                    specs,
                    runcRuntime,
                    cgroupTree,
                    pool,
                    rootfs,
                    envdClients,
                    utsHostname,
                    templates,
                    layerFiles,
                    clock,
                    settings.poolSize(),
                    settings.poolMax(),
                    envdTokens);
            GenerationStart starting = new GenerationStart(
                    containerNames,
                    templates,
                    specs,
                    runcRuntime,
                    sandboxDisks,
                    overlayMounts,
                    rootfs,
                    layerFiles,
                    firewall,
                    utsHostname,
                    envdClients,
                    releases,
                    clock);
            GenerationPause pausing = new GenerationPause(
                    cgroupTree,
                    runcRuntime,
                    overlayMounts,
                    sandboxDisks,
                    layerFiles,
                    containerNames,
                    releases,
                    runner,
                    lineageFiles);
            GenerationCapture capture = new GenerationCapture(
                    cgroupTree,
                    runcRuntime,
                    new LayerCapture(runner, Duration.ofMinutes(10)),
                    layerFiles,
                    lineageFiles);
            GenerationRelease release =
                    new GenerationRelease(cgroupTree, runcRuntime, rootfs, containerNames, releases, reaper);
            this.settings = settings;
            this.layout = layout;
            this.runner = runner;
            this.names = containerNames;
            this.runc = runcRuntime;
            this.cgroups = cgroupTree;
            this.overlays = overlayMounts;
            this.disks = sandboxDisks;
            this.firewall = firewall;
            this.pool = pool;
            this.deferredReleases = releases;
            this.hostnames = utsHostname;
            this.reaper = reaper;
            this.templateDirs = templateDirs;
            sandboxes = new ContainerSandboxes(
                    containerNames, pool, layout, starting, pausing, capture, release, envdClients, firewall, clock);
            log.atInfo()
                    .addKeyValue("work_dir", workDir)
                    .addKeyValue("envd", envd)
                    .addKeyValue("cpu_count", settings.cpuCount())
                    .addKeyValue("memory_mb", settings.memoryMiB())
                    .addKeyValue("disk_mb", settings.diskMiB())
                    .addKeyValue("spare_disks", settings.spareDisks())
                    .addKeyValue("privileges", settings.privileges())
                    .addKeyValue("leftover_slots", leftoverSlots.size())
                    .log("container backend initialized");
            initialized = true;
        } catch (IOException | CommandFailedException e) {
            throw new BackendException.Terminal(
                    "container backend: cannot prepare " + workDir + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("container backend: interrupted while initializing", e);
        } finally {
            if (!initialized) { // any failure, also an unchecked one: nothing started here may keep running
                boolean interrupted = Thread.interrupted(); // else the stops below could not wait for their threads
                if (envdClients != null) {
                    envdClients.close();
                    envdClients = null;
                }
                stop(spares);
                stop(reaper);
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private static void stop(SpareDisks spares) {
        try {
            spares.close();
        } catch (IOException e) {
            log.atWarn().setCause(e).log("could not remove every spare disk image");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void stop(InitReaper reaper) {
        try {
            reaper.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * envd's distribution is copied once per build into the backend's work dir (keeping mtimes, which its AOT cache
     * checks): a rebuild of envd while sandboxes run or sleep as checkpoints must not change the files their JVMs map.
     * The copy holds the {@link GuestRuntime} too (in {@link GuestRuntime#DIR}).
     */
    private static Path privateEnvdCopy(ProcessRunner runner, Path source, GuestRuntime runtime, Path copies)
            throws IOException, CommandFailedException, InterruptedException {
        StringBuilder fingerprint = new StringBuilder(runtime.fingerprint()).append("runtime-layout 2\n");
        for (Path file : ENVD_FILES.stream().map(source::resolve).toList()) {
            fingerprint
                    .append(source.relativize(file))
                    .append(' ')
                    .append(Files.size(file))
                    .append(' ')
                    .append(Files.getLastModifiedTime(file).toMillis())
                    .append('\n');
        }
        Path target = copies.resolve(TextDigest.sha256Hex(fingerprint.toString(), 16));
        if (Files.isRegularFile(target.resolve("agentenv-envd.jar"))) {
            return target;
        }
        Path partial = copies.resolve(".partial-" + target.getFileName());
        FileTrees.deleteTree(partial);
        Files.createDirectories(partial);
        for (String file : ENVD_FILES) {
            runner.run(Command.of(
                    Duration.ofMinutes(2),
                    "cp",
                    "-a",
                    source.resolve(file).toString(),
                    partial.resolve(file).toString()));
        }
        runtime.assemble(partial.resolve(GuestRuntime.DIR));
        Files.move(partial, target);
        return target;
    }

    /**
     * Removes everything of a previous run that no re-attached sandbox uses (see {@link LeftoverReaper}), then starts
     * keeping {@code base} warm.
     */
    @Override
    public void reapUnclaimed(Set<SandboxId> running) throws BackendException {
        requireInitialized();
        List<NetSlot> slots = List.copyOf(leftoverSlots.values());
        slots.forEach(slot -> leftoverSlots.remove(slot.index()));
        Set<ContainerId> containers = new HashSet<>();
        try {
            for (SandboxId id : running) {
                containers.add(names.containerFor(id));
            }
        } catch (IOException e) {
            throw new BackendException.Terminal("cannot read the warm-pool claims: " + e.getMessage(), e);
        }
        new LeftoverReaper(
                        names.idPrefix(),
                        names.sandboxesDir(),
                        names.claimsDir(),
                        GuestMounts.dir(layout),
                        runner,
                        runc,
                        cgroups,
                        overlays,
                        pool)
                .reap(running, containers, slots);
        if (templates().stream().anyMatch(t -> t.id().value().equals("base"))) {
            warmPool.keepWarm("base"); // builds the boot image and fills the pool in the background
        }
    }

    /** Network slots in use (one per sandbox and warm member) of {@code max_sandboxes}, and the warm pool's stock. */
    @Override
    public Optional<BackendCapacity> capacity() {
        if (sandboxes == null) {
            return Optional.empty();
        }
        List<BackendCapacity.PoolStock> stock = new ArrayList<>();
        warmPool.stock()
                .forEach((template, ready) -> stock.add(
                        new BackendCapacity.PoolStock(new TemplateId(template), ready, warmPool.target(template))));
        return Optional.of(new BackendCapacity(pool.inUse(), OptionalInt.of(pool.slotCount()), stock));
    }

    @Override
    public List<TemplateDescriptor> templates() {
        if (sandboxes == null) {
            return List.of();
        }
        List<TemplateDescriptor> found = new ArrayList<>();
        try {
            for (String name : templateDirs.names()) {
                // an image's template is where template builds start, not one to list (it is not prepared for use)
                if (TemplateId.isValid(name) && !templateDirs.isImage(name)) {
                    found.add(new TemplateDescriptor(
                            new TemplateId(name), settings.resources(), builtAt(templateDirs.current(name))));
                }
            }
        } catch (IOException e) {
            log.atWarn().setCause(e).log("cannot list the templates");
        }
        return List.copyOf(found);
    }

    /** {@link #templates()}' entry for {@code id} from its own directory alone (two stats instead of a listing). */
    @Override
    public Optional<TemplateDescriptor> template(TemplateId id) {
        if (sandboxes == null || !isTemplate(id)) {
            return Optional.empty();
        }
        return Optional.of(new TemplateDescriptor(id, settings.resources(), builtAt(templateDirs.current(id.value()))));
    }

    /**
     * Whether {@code template} is one of {@link #templates()}: its {@code current} build is linked (a stat or two, where
     * listing every template costs a directory read and two stats per template on each create).
     */
    private boolean isTemplate(TemplateId template) {
        return templateDirs.exists(template.value());
    }

    /** When the {@code current} link was made (scripts/lib/host/template.sh links a build once it is complete). */
    private static Optional<Instant> builtAt(Path current) {
        try {
            return Optional.of(Files.getLastModifiedTime(current, LinkOption.NOFOLLOW_LINKS)
                    .toInstant());
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /**
     * Links the image's rootfs as template {@code id}: {@code <templates>/<id>/image-<key>/rootfs} points at it and the
     * template's {@code current} link is switched to that directory in one rename, as the host setup does for
     * {@code base}. The first sandbox of it then builds its boot image like any template's ({@link TemplateImages});
     * envd and its init come from the {@link GuestRuntime}, so the image needs none of their files.
     */
    @Override
    public TemplateDescriptor addImageTemplate(TemplateId id, Path rootfs, String preparation) throws BackendException {
        requireInitialized();
        if (!TemplateDirs.isValidName(id.value())) {
            throw new BackendException.Terminal(
                    "an image template's name must be 1-63 lowercase letters, digits, '_' or '-': " + id);
        }
        try {
            Path image = rootfs.toRealPath();
            String build = "image-" + TextDigest.sha256Hex(image + "\n" + preparation, 16);
            if (templateDirs.linkImage(id.value(), image, preparation, build)) {
                log.atInfo()
                        .addKeyValue("template", id.value())
                        .addKeyValue("rootfs", image)
                        .log("image template linked");
            }
            return template(id).orElseThrow();
        } catch (IOException e) {
            throw new BackendException.Terminal("cannot add image template " + id + ": " + e.getMessage(), e);
        }
    }

    /**
     * A ready warm member of {@code template}, made for a sandbox id of its own and initialised for it (see
     * {@link WarmPool}); empty when none is ready, the pool is off or the server gave no token derivation.
     */
    @Override
    public Optional<Reservation> reserve(TemplateId template) {
        if (sandboxes == null || shutDown.get()) {
            return Optional.empty();
        }
        if (isImageTemplate(template)) {
            return Optional.empty(); // only template builds start from an image: no warm sandboxes for them
        }
        WarmPool pool = warmPool;
        pool.keepWarm(template.value());
        return pool.reserve(template.value());
    }

    /**
     * A network slot for a sandbox; when none is free, a warm member gives its slot up (ready sandboxes nobody asked
     * for yet must not refuse one that somebody did), else a release still running after a kill or pause is waited for
     * (at most {@link #SLOT_RELEASE_WAIT} in all: the client of a kill was answered before its slot came free).
     */
    private NetSlot acquireSlot() throws NetnsPool.NoFreeSlotException, CommandFailedException, InterruptedException {
        long deadline = System.nanoTime() + SLOT_RELEASE_WAIT.toNanos();
        while (true) {
            try {
                return pool.acquire();
            } catch (NetnsPool.NoFreeSlotException e) {
                if (warmPool.yieldOne()) {
                    continue;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0 || !deferredReleases.awaitOne(Duration.ofNanos(left))) {
                    throw e;
                }
            }
        }
    }

    /**
     * A ready restore of the snapshot {@code id}, kept warm from its first create on (at most {@link
     * WarmPool#MAX_SNAPSHOTS} snapshots are), like a template's (see {@link #reserve(TemplateId)}).
     */
    @Override
    public Optional<Reservation> reserve(
            TemplateId id,
            SnapshotState state,
            Map<String, String> envVars,
            String defaultUser,
            Optional<String> defaultWorkdir) {
        if (sandboxes == null || shutDown.get() || !(state instanceof SavedStates.Snapshot snapshot)) {
            return Optional.empty();
        }
        if (!snapshot.volumePaths().isEmpty()) { // a member would be restored without the volumes its checkpoint names
            return Optional.empty();
        }
        WarmPool pool = warmPool;
        WarmPool.MemberDefaults defaults = WarmPool.MemberDefaults.of(envVars, defaultUser, defaultWorkdir);
        return pool.keepWarm(id.value(), snapshot, defaults) ? pool.reserve(id.value()) : Optional.empty();
    }

    /** A deleted snapshot is no longer kept warm: its ready sandboxes are destroyed. */
    @Override
    public void snapshotDeleted(TemplateId id) {
        if (sandboxes == null) {
            return;
        }
        try {
            warmPool.forgetSnapshot(id.value());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether {@code template} is an image {@link #addImageTemplate} linked. */
    private boolean isImageTemplate(TemplateId template) {
        return templateDirs.isImage(template.value());
    }

    @Override
    public SandboxBackend prepare(LaunchSpec spec, LaunchSource source) throws BackendException {
        ContainerSandboxes made = requireInitialized();
        if (shutDown.get()) {
            throw new BackendException.Recoverable("the container backend is shut down");
        }
        ContainerSandbox.Launch launch;
        Resources resources;
        TemplateDirs.Kind kind = TemplateDirs.Kind.NONE; // a template launch's: one look-up, for the pool too
        switch (source) {
            case LaunchSource.Template(TemplateId template) -> {
                kind = templateDirs.kind(template.value());
                if (kind == TemplateDirs.Kind.NONE) {
                    throw new BackendException.Recoverable("no template '" + template + "' on this host");
                }
                launch = new ContainerSandbox.Launch.FromTemplate(template.value());
                resources = settings.resources();
            }
            case LaunchSource.Snapshot(SnapshotState state) -> {
                if (!(state instanceof SavedStates.Snapshot snapshot)) {
                    throw new BackendException.Terminal(
                            "not a container snapshot: " + state.getClass().getName());
                }
                launch = new ContainerSandbox.Launch.FromSnapshot(snapshot);
                resources = snapshot.resources();
            }
            case LaunchSource.Paused(PausedState state) -> {
                if (!(state instanceof SavedStates.Paused paused)) {
                    throw new BackendException.Terminal(
                            "not a container paused state: " + state.getClass().getName());
                }
                launch = new ContainerSandbox.Launch.FromPaused(paused);
                resources = paused.resources();
            }
        }
        boolean fromImage = kind == TemplateDirs.Kind.IMAGE; // only template builds start from an image: no pool
        Optional<String> poolKey = switch (launch) {
            case ContainerSandbox.Launch.FromTemplate(String template)
            when !fromImage -> {
                warmPool.keepWarm(template);
                yield Optional.of(template);
            }
            case ContainerSandbox.Launch.FromSnapshot s
            when warmPool.keepsSnapshot(spec.template().value()) ->
                Optional.of(spec.template().value());
            default -> Optional.empty();
        };
        if (poolKey.isPresent()) {
            String key = poolKey.get();
            Optional<WarmPool.Member> member = warmPool.claim(spec.id(), key).or(() -> warmPool.take(key));
            if (member.isPresent()) {
                return made.create(
                        spec,
                        launch,
                        member.get().id(),
                        member.get().slot(),
                        member,
                        resources,
                        ContainerSandbox.Phase.PREPARED);
            }
        }
        NetSlot slot;
        try {
            slot = acquireSlot();
        } catch (NetnsPool.NoFreeSlotException e) {
            throw e.exhausted();
        } catch (CommandFailedException e) {
            throw new BackendException.Recoverable("cannot create a network namespace: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Recoverable("interrupted while reserving a network slot", e);
        }
        return made.create(
                spec,
                launch,
                names.containerId(spec.id()),
                slot,
                Optional.empty(),
                resources,
                ContainerSandbox.Phase.PREPARED);
    }

    /**
     * Finishes the release of the sandbox's last pause (slot, runc's state and cgroups, sandbox dir, claim), trying a
     * failed one again ({@link DeferredReleases#await}); without this a failed release of a killed sandbox stayed until the
     * next start-up's {@link LeftoverReaper}.
     */
    @Override
    public void discardPaused(SandboxId id) throws BackendException {
        try {
            requireInitialized();
            deferredReleases.await(id);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Recoverable("interrupted while releasing paused sandbox " + id, e);
        }
    }

    @Override
    public PausedState decodePausedState(byte[] encoded, Path artifactDir) throws BackendException {
        return SavedStates.decodePaused(encoded, artifactDir);
    }

    @Override
    public SnapshotState decodeSnapshotState(byte[] encoded, Path artifactDir) throws BackendException {
        return SavedStates.decodeSnapshot(encoded, artifactDir);
    }

    /** A container that kept running while the server was down (runc still knows it), with its network slot. */
    @Override
    public Optional<SandboxBackend> reattach(LaunchSpec spec) throws BackendException {
        ContainerSandboxes made = requireInitialized();
        try {
            ContainerId id = names.containerFor(spec.id());
            Optional<ContainerState> state = runc.state(id);
            if (state.isEmpty()
                    || state.get().status() == ContainerState.Status.STOPPED
                    || state.get().status() == ContainerState.Status.CREATED) {
                return Optional.empty();
            }
            Optional<InstanceFile.Contents> instance = InstanceFile.read(names.dirs(id));
            if (instance.isEmpty()) {
                return Optional.empty();
            }
            NetSlot slot = leftoverSlots.remove(instance.get().slot());
            if (slot == null) {
                return Optional.empty();
            }
            cgroups.thawIfFrozen(id.value()); // a capture interrupted by the crash
            ContainerSandbox sandbox = made.create(
                    spec,
                    new ContainerSandbox.Launch.Reattached(instance.get().lineage()),
                    id,
                    slot,
                    Optional.empty(),
                    settings.resources(),
                    ContainerSandbox.Phase.RUNNING);
            sandbox.attach();
            log.atInfo().addKeyValue("sandbox_id", spec.id().value()).log("container sandbox re-attached");
            return Optional.of(sandbox);
        } catch (IOException | CommandFailedException e) {
            throw new BackendException.Terminal("cannot re-attach sandbox " + spec.id() + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while re-attaching sandbox " + spec.id(), e);
        }
    }

    /**
     * Stops the warm pool, waits for retired network slots, closes the envd clients; sandboxes were closed or paused
     * before.
     */
    @Override
    public void shutdown() {
        if (sandboxes == null || !shutDown.compareAndSet(false, true)) {
            return;
        }
        try {
            deferredReleases.awaitAll(); // the slots, containers and dirs paused sandboxes still held
            warmPool.close();
            pool.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        envdClients.close();
        try {
            hostnames.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        stop(disks.spares());
        stop(reaper);
        try {
            idmappedViews.close(); // overlays of sandboxes that run on keep their own references to the trees
        } catch (IOException e) {
            log.atWarn().setCause(e).log("could not unmount every idmapped view");
        }
    }

    /** The host's guest mounts, which the sandboxes' root id may pass to bind them. */
    private static GuestMounts guestMounts(ProcessRunner runner, ContainerSettings settings, HostLayout layout)
            throws IOException, CommandFailedException, InterruptedException {
        GuestMounts mounts = GuestMounts.prepare(layout);
        GuestPassage.grant(runner, settings.guestIds(), mounts.dev().getParent());
        return mounts;
    }

    /** The warm pool (tests watch it fill). */
    WarmPool warmPool() {
        return warmPool;
    }

    /** The sandboxes' names and dirs (tests inspect the host through them, as the accessors below). */
    ContainerNames names() {
        requireInitialized();
        return names;
    }

    ContainerSettings settings() {
        requireInitialized();
        return settings;
    }

    ProcessRunner runner() {
        requireInitialized();
        return runner;
    }

    RuncRuntime runc() {
        requireInitialized();
        return runc;
    }

    CgroupTree cgroups() {
        requireInitialized();
        return cgroups;
    }

    OverlayMounts overlays() {
        requireInitialized();
        return overlays;
    }

    SandboxDisks disks() {
        requireInitialized();
        return disks;
    }

    EgressFirewall firewall() {
        requireInitialized();
        return firewall;
    }

    NetnsPool pool() {
        requireInitialized();
        return pool;
    }

    DeferredReleases deferredReleases() {
        requireInitialized();
        return deferredReleases;
    }

    private ContainerSandboxes requireInitialized() {
        ContainerSandboxes made = sandboxes;
        if (made == null) {
            throw new IllegalStateException("the container backend is not initialized");
        }
        return made;
    }
}
