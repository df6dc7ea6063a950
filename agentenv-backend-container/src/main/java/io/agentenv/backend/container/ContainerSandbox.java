package io.agentenv.backend.container;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.client.EnvdAddress;
import io.agentenv.envd.client.HttpEnvdClient;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdApi;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdInit;
import io.agentenv.spi.GuestEndpoint;
import io.agentenv.spi.HostNetwork;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SnapshotState;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One runtime generation of one container sandbox: a runc container in its own overlay, network slot and cgroup, with
 * envd reached over the unix socket in its host dir. Built by {@link ContainerBackendFactory#prepare} (slot and dirs
 * reserved, nothing running); {@link #start} boots or restores it according to its {@link Launch}.
 *
 * <p>Phases move by compare-and-set: PREPARED → STARTING → RUNNING → (PAUSING → PAUSED) and anything → CLOSED. The
 * orchestrator runs at most one lifecycle call at a time; {@link #guest()}, {@link #envd()} and {@link #resources()}
 * only read volatile fields.
 *
 * <p>Longer than the house's ~400 lines on purpose: it is the one place that owns a generation's phase, slot and
 * client, and every operation (start per launch kind, pause, snapshot, close) moves that phase; the host steps it
 * calls are in {@link HostParts}, the states in {@link SavedStates}.
 */
final class ContainerSandbox implements SandboxBackend {

    private static final Logger log = LoggerFactory.getLogger(ContainerSandbox.class);

    enum Phase { PREPARED, STARTING, RUNNING, PAUSING, PAUSED, CLOSED }

    /** Where this generation's state comes from. */
    sealed interface Launch {
        /** A restore of the template's boot checkpoint (or a cold boot when boot arguments are given). */
        record FromTemplate(String template) implements Launch {}

        /** A restore of a snapshot (create-from-snapshot, fork child). */
        record FromSnapshot(SavedStates.Snapshot state) implements Launch {}

        /** A resume of this sandbox from its pause. */
        record FromPaused(SavedStates.Paused state) implements Launch {}

        /** Re-attached after a server restart: already running. */
        record Reattached(Lineage lineage) implements Launch {}
    }

    private final HostParts parts;
    private final TemplateImages templates;
    private final Optional<WarmPool.Member> warm;
    private final Clock clock;
    private final LaunchSpec spec;
    private final Launch launch;
    private final ContainerId id;
    private final SandboxDirs dirs;
    private final Resources resources;
    private final HostNetwork hostNetwork;
    private final AtomicReference<Phase> phase;
    private final AtomicReference<NetSlot> slot;
    private volatile NetSlot liveSlot;
    private volatile HttpEnvdClient client;
    private volatile Lineage lineage;
    private volatile boolean frozen;
    private volatile List<String> bootEnv = List.of();

    /**
     * @param id   the container: the spec's own ({@link HostParts#containerId}) or a warm-pool member's
     * @param warm the warm-pool member this sandbox claims at start (its container, dirs and slot), if any
     */
    ContainerSandbox(HostParts parts, TemplateImages templates, Clock clock, LaunchSpec spec, Launch launch,
                     ContainerId id, NetSlot slot, Optional<WarmPool.Member> warm, Resources resources, Phase initial) {
        this.parts = requireNonNull(parts, "parts is null");
        this.templates = requireNonNull(templates, "templates is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.spec = requireNonNull(spec, "spec is null");
        this.launch = requireNonNull(launch, "launch is null");
        this.resources = requireNonNull(resources, "resources is null");
        this.id = requireNonNull(id, "id is null");
        this.warm = requireNonNull(warm, "warm is null");
        this.dirs = parts.dirs(id);
        this.slot = new AtomicReference<>(requireNonNull(slot, "slot is null"));
        this.liveSlot = slot;
        this.phase = new AtomicReference<>(initial);
        this.hostNetwork = new HostNetwork(slot.netnsPath(), address(slot.sandboxAddress()));
        if (launch instanceof Launch.Reattached(Lineage existing)) {
            this.lineage = existing;
        }
    }

    ContainerId containerId() {
        return id;
    }

    /** After a restart: the client of a container that kept running (its envd already has the spec's token). */
    void attach() {
        client = parts.envdClients().open(spec.id(), envdAddress(liveSlot), Optional.of(spec.accessToken()));
    }

    @Override
    public void extraBootArgs(String arguments) throws BackendException {
        requireNonNull(arguments, "arguments is null");
        if (!(launch instanceof Launch.FromTemplate) || phase.get() != Phase.PREPARED) {
            throw new BackendException.Recoverable("boot arguments apply only to a fresh launch before start");
        }
        if (arguments.isBlank() || arguments.indexOf('\0') >= 0 || arguments.length() > 4096) {
            throw new BackendException.Recoverable("boot arguments must be 1..4096 characters without NUL");
        }
        bootEnv = List.of("AENV_EXTRA_BOOT_ARGS=" + arguments);
    }

    @Override
    public void start(Duration readyTimeout) throws BackendException {
        if (!phase.compareAndSet(Phase.PREPARED, Phase.STARTING)) {
            throw new BackendException.Terminal("sandbox " + spec.id() + " cannot start from " + phase.get());
        }
        Instant deadline = clock.instant().plus(readyTimeout);
        long started = System.nanoTime();
        try {
            Files.createDirectories(dirs.envd());
            Optional<Path> images;
            Optional<AccessToken> guestToken;
            boolean claimWarm = warm.isPresent() && bootEnv.isEmpty();
            if (warm.isPresent() && !claimWarm) {
                discardWarmContainer(); // booted without the boot arguments: boot afresh in the same dirs and slot
            }
            switch (launch) {
                case Launch.FromTemplate(String template) when claimWarm -> {
                    lineage = warm.get().lineage();
                    images = Optional.empty();
                    guestToken = Optional.empty();
                }
                case Launch.FromTemplate(String template) when !bootEnv.isEmpty() -> {
                    lineage = new Lineage(List.of(), parts.layout().templateRootfs(template).toRealPath(),
                            templates.envdDir());
                    images = Optional.empty();
                    guestToken = Optional.empty();
                }
                case Launch.FromTemplate(String template) -> {
                    TemplateImages.Image image = templates.image(template);
                    lineage = image.lineage();
                    images = Optional.of(image.images());
                    guestToken = Optional.empty();
                }
                case Launch.FromSnapshot(SavedStates.Snapshot state) -> {
                    SavedStates.requirePresent(state.lineage(), state.layers(), Optional.of(state.images()));
                    parts.copyLayers(state.layers(), HostParts.layersDir(dirs),
                            state.lineage().owned().stream().map(n -> new String[] {n, n}).toList());
                    lineage = state.lineage();
                    images = Optional.of(state.images());
                    guestToken = state.guestToken();
                }
                case Launch.FromPaused(SavedStates.Paused state) -> {
                    boolean memory = state.mode() == PauseMode.WITH_MEMORY;
                    SavedStates.requirePresent(state.lineage(), state.layers(),
                            memory ? Optional.of(state.images()) : Optional.empty());
                    parts.move(state.upper(), dirs.upper());
                    parts.move(state.layers(), HostParts.layersDir(dirs));
                    lineage = state.lineage();
                    images = memory ? Optional.of(state.images()) : Optional.empty();
                    guestToken = memory ? Optional.of(spec.accessToken()) : Optional.empty();
                }
                case Launch.Reattached r -> throw new BackendException.Terminal("a re-attached sandbox is already running");
            }
            NetSlot netSlot = requireSlot();
            if (warm.isPresent()) {
                parts.claim(spec.id(), id); // this sandbox runs in the member's container (restart recovery finds it)
            }
            applyInitialEgress(netSlot);
            if (claimWarm) {
                parts.setHostname(initPid(), spec.id().value());
            } else {
                parts.overlays().mount(lineage.lowers(HostParts.layersDir(dirs)), dirs.upper(), dirs.work(), dirs.rootfs());
                RuncRuntime.writeConfig(dirs.bundle(), parts.ociSpecs().build(
                        parts.spec(id, dirs, netSlot, spec.id().value(), lineage, resources, bootEnv)));
            }
            if (claimWarm) {
                // restored by the pool; envd answers and waits for its /init
            } else if (images.isPresent()) {
                parts.runc().restore(id, dirs.bundle(), images.get(), dirs.restoreWork());
                if (!(launch instanceof Launch.FromPaused)) {
                    parts.setHostname(initPid(), spec.id().value());
                }
            } else {
                parts.runc().create(id, dirs.bundle());
                parts.runc().start(id);
            }
            HttpEnvdClient opened = parts.envdClients().open(spec.id(), envdAddress(netSlot), guestToken);
            client = opened;
            opened.waitUntilHealthy(deadline);
            opened.init(new EnvdInit(Optional.of(spec.accessToken()), spec.envVars(), Optional.of(spec.defaultUser()),
                    workdir(spec.defaultUser()), clock.instant()));
            InstanceFile.write(dirs, lineage, netSlot.index());
        } catch (IOException | CommandFailedException | EnvdException | RuntimeException e) {
            rollBackPausedFiles();
            // a template launch's files are the template's and envd's only; any other launch's are the user's (untrusted)
            String envdLog = launch instanceof Launch.FromTemplate ? HostParts.envdLogTail(dirs) : "(not read: user files)";
            throw new BackendException.Terminal("sandbox " + spec.id() + " did not start (" + launch.getClass().getSimpleName()
                    + "): " + e.getMessage() + "\nenvd log:\n" + envdLog, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            rollBackPausedFiles();
            throw new BackendException.Terminal("interrupted while starting sandbox " + spec.id(), e);
        }
        if (!phase.compareAndSet(Phase.STARTING, Phase.RUNNING)) {
            throw new BackendException.Terminal("sandbox " + spec.id() + " was closed while starting");
        }
        log.atInfo().addKeyValue("sandbox_id", spec.id().value()).addKeyValue("launch", launch.getClass().getSimpleName())
                .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000).log("container sandbox started");
    }

    /**
     * The spec's egress rules, before the sandbox's processes run (a claimed member's envd has not been initialised,
     * so nothing of the user's runs yet). A slot is new for every generation and has no rules of its own, so an open
     * policy needs no firewall change at all.
     */
    private void applyInitialEgress(NetSlot netSlot) throws CommandFailedException, InterruptedException {
        EgressPolicy policy = egress(spec.network());
        if (!policy.isOpen()) {
            parts.firewall().apply(netSlot, policy);
        }
    }

    /** Stops the warm member's container and empties its dirs, keeping the slot. */
    private void discardWarmContainer() throws IOException, CommandFailedException, InterruptedException {
        parts.runc().delete(id);
        parts.overlays().unmount(dirs.rootfs());
        parts.deleteTree(dirs.upper());
        parts.deleteTree(dirs.work());
        parts.deleteTree(dirs.restoreWork());
    }

    /**
     * A resume that failed must leave the paused state resumable: stop what was started and move the upper and the
     * layers back into the artifact dir before close() deletes the sandbox dir.
     */
    private void rollBackPausedFiles() {
        if (!(launch instanceof Launch.FromPaused(SavedStates.Paused state))) {
            return;
        }
        try {
            closeClient();
            parts.runc().delete(id);
            parts.overlays().unmount(dirs.rootfs());
            parts.move(dirs.upper(), state.upper());
            parts.move(HostParts.layersDir(dirs), state.layers());
        } catch (IOException | CommandFailedException e) {
            log.atError().addKeyValue("sandbox_id", spec.id().value()).setCause(e)
                    .log("could not move the paused files back after a failed resume");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public PausedState pause(PauseMode mode, Path artifactDir) throws BackendException {
        requireNonNull(mode, "mode is null");
        if (!phase.compareAndSet(Phase.RUNNING, Phase.PAUSING)) {
            throw new BackendException.Recoverable("sandbox " + spec.id() + " is not running: " + phase.get());
        }
        SavedStates.Paused paused = new SavedStates.Paused(mode, lineage, resources, artifactDir);
        Path work = dirs.dir().resolve("dump-work");
        long started = System.nanoTime();
        long checkpointed;
        try {
            if (mode == PauseMode.WITH_MEMORY) {
                checkpointToDisk(paused.images(), work);
            } else if (frozen) {
                parts.cgroups().thaw(id);
                frozen = false;
            }
        } catch (IOException | CommandFailedException e) {
            return failedPause(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while pausing sandbox " + spec.id(), e);
        }
        checkpointed = System.nanoTime();
        closeClient();
        // The checkpoint is on disk; what is left is releasing, in independent parts that run at once: the container
        // (after a memory dump runc has destroyed it: this confirms it), the network slot (its nft chain and two `ip`
        // runs) and the files (unmount, keep upper and layers, remove the dir). Pause returns once all are done. A
        // filesystem-only pause stops the container before its files move.
        boolean dumped = mode == PauseMode.WITH_MEMORY;
        List<FutureTask<Void>> releases = new ArrayList<>();
        releases.add(inBackground("pause-slot-" + id.value(), this::releaseSlot));
        if (dumped) {
            releases.add(inBackground("pause-container-" + id.value(), () -> parts.runc().delete(id)));
        }
        List<Exception> failures = new ArrayList<>();
        try {
            attempt(failures, () -> {
                if (!dumped) {
                    parts.runc().delete(id);
                }
                parts.overlays().unmount(dirs.rootfs());
                parts.move(dirs.upper(), paused.upper());
                if (Files.isDirectory(HostParts.layersDir(dirs))) {
                    parts.move(HostParts.layersDir(dirs), paused.layers());
                }
                parts.deleteTree(dirs.dir());
                parts.unclaim(spec.id()); // a resume restores into the sandbox's own container id
            });
            for (FutureTask<Void> release : releases) {
                attempt(failures, () -> awaitRelease(release));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while pausing sandbox " + spec.id(), e);
        }
        if (!failures.isEmpty()) {
            phase.set(Phase.CLOSED);
            BackendException.Terminal error = new BackendException.Terminal("sandbox " + spec.id()
                    + " stopped but was not fully released: " + failures.getFirst().getMessage(), failures.getFirst());
            failures.subList(1, failures.size()).forEach(error::addSuppressed);
            throw error;
        }
        phase.set(Phase.PAUSED);
        long done = System.nanoTime();
        log.atInfo().addKeyValue("sandbox_id", spec.id().value()).addKeyValue("mode", mode)
                .addKeyValue("checkpoint_ms", (checkpointed - started) / 1_000_000)
                .addKeyValue("release_ms", (done - checkpointed) / 1_000_000).log("container sandbox paused");
        return paused;
    }

    /**
     * Freezes the sandbox here, then lets CRIU dump and kill it. CRIU freezing a cgroup v1 itself re-reads the freezer
     * state every 100 ms, so its freeze costs a fixed 100 ms although the kernel freezes envd in ~2 ms; a cgroup that
     * is FROZEN already is dumped as it is. After a successful dump CRIU kills the tasks and thaws the cgroup, and runc
     * destroys the container (its cgroup is usually gone by the time this thaws whatever is left). After a failed one
     * CRIU freezes the cgroup again, and this thaws it: the sandbox runs on, as before the pause.
     */
    private void checkpointToDisk(Path images, Path work) throws IOException, CommandFailedException, InterruptedException {
        if (!frozen) {
            parts.cgroups().freeze(id); // undone by freeze itself when the kernel cannot complete it
            frozen = true;
        }
        try {
            parts.runc().checkpoint(id, images, work, RuncRuntime.AfterCheckpoint.STOP);
        } catch (IOException | CommandFailedException e) {
            try {
                parts.cgroups().thaw(id);
                frozen = false;
            } catch (IOException thawFailed) {
                e.addSuppressed(thawFailed);
            }
            throw e;
        }
        parts.cgroups().thawIfFrozen(id.value()); // runc has usually removed the cgroup by now
        frozen = false;
    }

    /** Runs one release step on its own virtual thread. */
    private static FutureTask<Void> inBackground(String name, Step step) {
        FutureTask<Void> task = new FutureTask<>(() -> {
            step.run();
            return null;
        });
        Thread.ofVirtual().name(name).start(task);
        return task;
    }

    /** Waits for a release step and rethrows how it failed. */
    private static void awaitRelease(FutureTask<Void> release) throws Exception {
        try {
            release.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        }
    }

    /** A checkpoint that failed: Recoverable when the container still runs (CRIU resumes it), else Terminal. */
    private PausedState failedPause(Exception e) throws BackendException {
        boolean running;
        try {
            running = parts.runc().state(id).map(s -> s.status() == ContainerState.Status.RUNNING).orElse(false);
        } catch (CommandFailedException stateFailed) {
            running = false;
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            running = false;
        }
        if (running && phase.compareAndSet(Phase.PAUSING, Phase.RUNNING)) {
            throw new BackendException.Recoverable("pause of sandbox " + spec.id() + " failed, still running: " + e.getMessage(), e);
        }
        throw new BackendException.Terminal("pause of sandbox " + spec.id() + " failed: " + e.getMessage(), e);
    }

    @Override
    public void freeze() throws BackendException {
        requireRunning("freeze");
        try {
            parts.cgroups().freeze(id);
            frozen = true;
        } catch (IOException e) {
            throw new BackendException.Recoverable("freeze of sandbox " + spec.id() + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Recoverable("interrupted while freezing sandbox " + spec.id(), e);
        }
    }

    @Override
    public void thaw() throws BackendException {
        requireRunning("thaw");
        try {
            parts.cgroups().thaw(id);
            frozen = false;
        } catch (IOException e) {
            throw new BackendException.Terminal("thaw of sandbox " + spec.id() + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while thawing sandbox " + spec.id(), e);
        }
    }

    /**
     * Freezes (unless frozen already), copies the upper dir as layer 0 and hard-links the owned layers below it into
     * the artifact dir, checkpoints memory with leave-running, and thaws.
     */
    @Override
    public SnapshotState snapshot(Path artifactDir) throws BackendException {
        requireRunning("snapshot");
        Lineage current = lineage;
        SavedStates.Snapshot snapshot = new SavedStates.Snapshot(current.withCapturedUpper(), resources,
                Optional.of(spec.accessToken()), artifactDir);
        boolean wasFrozen = frozen;
        long started = System.nanoTime();
        Path work = dirs.dir().resolve("snapshot-work");
        try {
            if (!wasFrozen) {
                parts.cgroups().freeze(id);
            }
            parts.layerCapture().capture(dirs.upper(), snapshot.layers().resolve("0"));
            parts.copyLayers(HostParts.layersDir(dirs), snapshot.layers(), current.renumbered());
            parts.runc().checkpoint(id, snapshot.images(), work, RuncRuntime.AfterCheckpoint.LEAVE_RUNNING);
        } catch (IOException | CommandFailedException e) {
            thawAfterSnapshot(wasFrozen);
            discard(snapshot.layers(), snapshot.images(), work);
            throw new BackendException.Recoverable("snapshot of sandbox " + spec.id() + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            thawAfterSnapshot(wasFrozen);
            throw new BackendException.Recoverable("interrupted while capturing sandbox " + spec.id(), e);
        }
        thawAfterSnapshot(wasFrozen);
        discard(work);
        log.atInfo().addKeyValue("sandbox_id", spec.id().value()).addKeyValue("layers", snapshot.lineage().layers().size())
                .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000).log("container sandbox captured");
        return snapshot;
    }

    private void thawAfterSnapshot(boolean wasFrozen) throws BackendException {
        if (wasFrozen) {
            return;
        }
        try {
            parts.cgroups().thaw(id);
        } catch (IOException e) {
            throw new BackendException.Terminal("sandbox " + spec.id() + " stays frozen after a capture: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while thawing sandbox " + spec.id(), e);
        }
    }

    private void discard(Path... paths) {
        for (Path path : paths) {
            try {
                parts.deleteTree(path);
            } catch (CommandFailedException e) {
                log.atWarn().addKeyValue("sandbox_id", spec.id().value()).addKeyValue("path", path).setCause(e)
                        .log("could not remove a partial capture");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void updateNetwork(NetworkPolicy policy) throws BackendException {
        requireNonNull(policy, "policy is null");
        NetSlot netSlot = requireSlot();
        EgressPolicy egress;
        try {
            egress = egress(policy);
        } catch (IllegalArgumentException e) {
            throw new BackendException.Recoverable("network policy not enforceable: " + e.getMessage(), e);
        }
        try {
            parts.firewall().apply(netSlot, egress);
        } catch (CommandFailedException e) {
            throw new BackendException.Recoverable("network rules of sandbox " + spec.id() + " not updated: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Recoverable("interrupted while updating the network of sandbox " + spec.id(), e);
        }
    }

    /** The user's policy on top of the host-wide rules (no other sandbox, host service or internal range, ever). */
    static EgressPolicy egress(NetworkPolicy policy) {
        EgressPolicy.Default otherwise = policy.internetAccess() == NetworkPolicy.InternetAccess.DENIED
                ? EgressPolicy.Default.DENY : EgressPolicy.Default.ALLOW;
        return new EgressPolicy(otherwise, policy.allowOut(), policy.denyOut());
    }

    @Override
    public Optional<HostNetwork> hostNetwork() {
        return Optional.of(hostNetwork);
    }

    @Override
    public Optional<GuestEndpoint> guest() {
        if (phase.get() != Phase.RUNNING) {
            return Optional.empty();
        }
        return Optional.of(new GuestEndpoint(liveSlot.sandboxAddress(), HostParts.ENVD_PORT, Optional.empty()));
    }

    @Override
    public Optional<EnvdApi> envd() {
        HttpEnvdClient current = client;
        return phase.get() == Phase.RUNNING && current != null ? Optional.of(current) : Optional.empty();
    }

    @Override
    public Resources resources() {
        return resources;
    }

    /**
     * Stops the container and releases its overlay, cgroup, network slot and dir. After a pause only the (already
     * released) runtime is gone; the paused files belong to the artifact dir and are never touched here. Every step is
     * idempotent, so a failed close can be repeated.
     */
    @Override
    public void close() throws BackendException {
        Phase before = phase.getAndSet(Phase.CLOSED);
        closeClient();
        if (before == Phase.PAUSED) {
            return;
        }
        List<Exception> failures = new ArrayList<>();
        try {
            attempt(failures, () -> parts.cgroups().thawIfFrozen(id.value()));
            if (before != Phase.PREPARED || Files.exists(dirs.bundle().resolve("config.json"))) {
                attempt(failures, () -> parts.runc().delete(id));
            }
            attempt(failures, () -> {
                if (!parts.cgroups().pathsOf(id.value()).isEmpty()) {
                    parts.cgroups().reap(id.value());
                }
            });
            attempt(failures, () -> parts.overlays().unmount(dirs.rootfs()));
            attempt(failures, this::releaseSlot);
            attempt(failures, () -> parts.deleteTree(dirs.dir()));
            attempt(failures, () -> parts.unclaim(spec.id()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while closing sandbox " + spec.id(), e);
        }
        if (!failures.isEmpty()) {
            BackendException.Terminal error = new BackendException.Terminal("sandbox " + spec.id()
                    + " not fully released: " + failures.getFirst().getMessage(), failures.getFirst());
            failures.subList(1, failures.size()).forEach(error::addSuppressed);
            throw error;
        }
        if (before != Phase.CLOSED) {
            log.atInfo().addKeyValue("sandbox_id", spec.id().value()).log("container sandbox closed");
        }
    }

    private interface Step {
        void run() throws Exception;
    }

    private static void attempt(List<Exception> failures, Step step) throws InterruptedException {
        try {
            step.run();
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            failures.add(e);
        }
    }

    private void releaseSlot() throws CommandFailedException, InterruptedException {
        NetSlot held = slot.getAndSet(null);
        if (held != null) {
            parts.pool().release(held);
        }
    }

    private void closeClient() {
        HttpEnvdClient current = client;
        client = null;
        if (current != null) {
            current.close();
        }
    }

    private NetSlot requireSlot() throws BackendException {
        NetSlot held = slot.get();
        if (held == null) {
            throw new BackendException.Terminal("sandbox " + spec.id() + " has no network slot any more");
        }
        return held;
    }

    private void requireRunning(String what) throws BackendException {
        if (phase.get() != Phase.RUNNING) {
            throw new BackendException.Recoverable("cannot " + what + " sandbox " + spec.id() + ": " + phase.get());
        }
    }

    /**
     * envd over TCP on the sandbox's veth, not its unix socket: a unix connection from the host lives in the host's
     * network namespace (the kernel creates the accepted socket in the connecting side's), where CRIU cannot find it,
     * so any open host connection would make a checkpoint fail. TCP connections are in the sandbox's namespace and
     * are cut by the checkpoint (tcp-close).
     */
    static EnvdAddress envdAddress(NetSlot slot) {
        return new EnvdAddress.Tcp(slot.sandboxAddress(), HostParts.ENVD_PORT);
    }

    private long initPid() throws IOException {
        return Long.parseLong(Files.readString(dirs.bundle().resolve(RuncRuntime.BUNDLE_PIDFILE)).strip());
    }

    private static Optional<String> workdir(String user) {
        return switch (user) {
            case "user" -> Optional.of("/home/user"); // E2B's base template contract
            case "root" -> Optional.of("/root");
            default -> Optional.empty(); // envd uses the user's home
        };
    }

    private static InetAddress address(String dotted) {
        try {
            return InetAddress.getByName(dotted); // a literal: no lookup
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an address: " + dotted, e);
        }
    }
}
