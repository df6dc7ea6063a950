package io.agentenv.backend.container.lifecycle;

import static java.util.Objects.requireNonNull;

import io.agentenv.backend.container.guest.EnvdLayout;
import io.agentenv.backend.container.guest.GuestProcFiles;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.ContainerId;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.TextDigest;
import io.agentenv.backend.container.network.EgressFirewall;
import io.agentenv.backend.container.network.EgressPolicy;
import io.agentenv.backend.container.network.NetSlot;
import io.agentenv.backend.container.network.NetnsPool;
import io.agentenv.backend.container.runtime.OciSpecs;
import io.agentenv.backend.container.runtime.RuncRuntime;
import io.agentenv.backend.container.storage.GuestFileReads;
import io.agentenv.backend.container.storage.LayerFiles;
import io.agentenv.backend.container.storage.OverlayMounts;
import io.agentenv.backend.container.storage.SandboxDirs;
import io.agentenv.backend.container.storage.SandboxRootfs;
import io.agentenv.envd.client.EnvdClient;
import io.agentenv.envd.client.EnvdClients;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.SandboxId;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Templates are snapshots: the first time a template is used, a container boots it (envd started, not initialised),
 * is checkpointed to disk and stopped, and its upper dir becomes the template's boot layer. Every sandbox of the
 * template is then a restore of that checkpoint onto {@code [boot layer, template rootfs]} plus its own upper, and
 * envd gets its token, env vars and clock through {@code /init}. Before the checkpoint the boot envd warms its request
 * path ({@link #BOOT_ENVD_ARGS}); the host waits for its {@code GET /ready}, which answers once that is done.
 *
 * <p>An image is kept under {@code <workDir>/templates/<template>-<key>}, where the key covers the template build, the
 * envd distribution, the JDK and the resources; a change of any of them makes a new image (old ones stay for paused
 * sandboxes and snapshots that reference them). Concurrent first uses wait for one build; a failed build is retried
 * by the next use.
 */
public final class TemplateImages {

    private static final Logger log = LoggerFactory.getLogger(TemplateImages.class);
    private static final Duration BOOT_TIMEOUT = Duration.ofSeconds(90);
    private static final String READY = "ready";
    private static final Duration PREPARATION_POLL = Duration.ofMillis(5);
    /**
     * The template's boot envd warms its own request path before the checkpoint (envd {@code --warm-requests}): every
     * sandbox is a restore of it, so its first commands then run compiled code instead of cold (see
     * docs/benchmarks.md, "envd warmed before the template checkpoint, until the JIT settles"). Only that first
     * envd: one the init starts again in a sandbox does not warm itself.
     */
    public static final List<String> BOOT_ENVD_ARGS = List.of("--warm-requests", "300");

    /** A template's boot checkpoint. */
    record Image(Lineage lineage, Path images) {
        Image {
            requireNonNull(lineage, "lineage is null");
            requireNonNull(images, "images is null");
        }
    }

    private final ContainerSettings settings;
    private final ContainerNames names;
    private final SandboxSpecs specs;
    private final RuncRuntime runc;
    private final NetnsPool pool;
    private final EgressFirewall firewall;
    private final OverlayMounts overlays;
    private final SandboxRootfs sandboxRootfs;
    private final LayerFiles layerFiles;
    private final EnvdClients envdClients;
    private final Path imagesDir;
    private final Path envdDir;
    private final TemplateDirs templateDirs;
    private final LineageFiles lineageFiles;
    private final Clock clock;
    private final Map<String, CompletableFuture<Image>> builds = new ConcurrentHashMap<>();

    public TemplateImages(
            ContainerSettings settings,
            ContainerNames names,
            SandboxSpecs specs,
            RuncRuntime runc,
            NetnsPool pool,
            EgressFirewall firewall,
            OverlayMounts overlays,
            SandboxRootfs sandboxRootfs,
            LayerFiles layerFiles,
            EnvdClients envdClients,
            Path imagesDir,
            Path envdDir,
            TemplateDirs templateDirs,
            LineageFiles lineageFiles,
            Clock clock) {
        this.settings = requireNonNull(settings, "settings is null");
        this.names = requireNonNull(names, "names is null");
        this.specs = requireNonNull(specs, "specs is null");
        this.runc = requireNonNull(runc, "runc is null");
        this.pool = requireNonNull(pool, "pool is null");
        this.firewall = requireNonNull(firewall, "firewall is null");
        this.overlays = requireNonNull(overlays, "overlays is null");
        this.sandboxRootfs = requireNonNull(sandboxRootfs, "sandboxRootfs is null");
        this.layerFiles = requireNonNull(layerFiles, "layerFiles is null");
        this.envdClients = requireNonNull(envdClients, "envdClients is null");
        this.imagesDir = requireNonNull(imagesDir, "imagesDir is null");
        this.envdDir = requireNonNull(envdDir, "envdDir is null");
        this.templateDirs = requireNonNull(templateDirs, "templateDirs is null");
        this.lineageFiles = requireNonNull(lineageFiles, "lineageFiles is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    /** The envd distribution every new sandbox runs (a private copy, see {@code ContainerBackendFactory}). */
    Path envdDir() {
        return envdDir;
    }

    /** The root filesystem of the template's current build. */
    Path rootfs(String template) throws IOException {
        return templateDirs.rootfs(template);
    }

    /**
     * A saved state's lineage with the template's files it names on this machine: fetched from the cluster's shared
     * storage when they are not ({@link LineageFiles#localize}).
     */
    Lineage localize(Lineage lineage, Map<String, String> files) throws BackendException {
        return lineageFiles.localize(lineage, files);
    }

    /** The template's boot image, built on first use (blocks meanwhile; other callers wait for the same build). */
    Image image(String template) throws BackendException {
        Path rootfs;
        String preparation;
        try {
            rootfs = templateDirs.rootfs(template);
            preparation = templateDirs.preparation(template);
        } catch (IOException e) {
            throw new BackendException.Terminal(
                    "template " + template + " is not available: " + e.getMessage() + " (run scripts/setup-host.sh)",
                    e);
        }
        String key = template + "-" + key(rootfs, preparation);
        CompletableFuture<Image> mine = new CompletableFuture<>();
        CompletableFuture<Image> build = builds.putIfAbsent(key, mine);
        if (build == null) {
            build = mine;
            try {
                Image image = loadOrBuild(template, rootfs, preparation, imagesDir.resolve(key));
                lineageFiles.publishLater(image.lineage()); // in a cluster: ready in the shared storage before a pause
                mine.complete(image);
            } catch (BackendException | RuntimeException e) {
                builds.remove(key, mine);
                mine.completeExceptionally(e);
            } catch (InterruptedException e) {
                builds.remove(key, mine);
                mine.completeExceptionally(e);
                Thread.currentThread().interrupt();
            }
        }
        try {
            return build.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof BackendException.Exhausted exhausted) {
                throw new BackendException.Exhausted(exhausted.limit(), exhausted.getMessage(), exhausted);
            }
            if (e.getCause() instanceof BackendException be) {
                throw new BackendException.Terminal(be.getMessage(), be);
            }
            throw new BackendException.Terminal(
                    "template " + template + " image failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BackendException.Terminal("interrupted while waiting for the image of template " + template, e);
        }
    }

    private String key(Path rootfs, String preparation) {
        // the boot envd's first command line (its request warm-up) comes first: images checkpointed before it or with
        // another warm-up get a new key
        String text = String.join(
                "\n",
                EnvdLayout.envdSupervisor(BOOT_ENVD_ARGS),
                rootfs.toString(),
                envdDir.toString(),
                settings.jdkHome().toString(),
                Integer.toString(settings.cpuCount()),
                Integer.toString(settings.memoryMiB()),
                settings.privileges().name(),
                "v2",
                EnvdLayout.ENVD_SUPERVISOR,
                EnvdLayout.ENVD_JOURNAL,
                OciSpecs.MOUNT_LAYOUT,
                preparation);
        return TextDigest.sha256Hex(text, 16);
    }

    private Image loadOrBuild(String template, Path rootfs, String preparation, Path dir)
            throws BackendException, InterruptedException {
        Image image = new Image(
                new Lineage(List.of(dir.resolve("layer").toString()), rootfs, envdDir), dir.resolve("images"));
        if (Files.exists(dir.resolve(READY))) {
            return image;
        }
        long started = System.nanoTime();
        ContainerId id = new ContainerId(settings.idPrefix() + "tpl-" + template.replace('.', '-') + "-"
                + dir.getFileName()
                        .toString()
                        .substring(dir.getFileName().toString().length() - 8));
        SandboxDirs dirs = names.dirs(id);
        Path partial = dir.resolveSibling("." + dir.getFileName() + ".partial");
        NetSlot slot = null;
        try {
            FileTrees.deleteTree(partial);
            runc.delete(id);
            sandboxRootfs.unmount(dirs);
            FileTrees.deleteTree(dirs.dir());
            try {
                slot = pool.acquire();
            } catch (NetnsPool.NoFreeSlotException e) {
                throw e.exhausted();
            }
            firewall.apply(slot, new EgressPolicy(EgressPolicy.Default.DENY, List.of(), List.of()));
            specs.makeEnvdDir(dirs);
            Lineage boot = new Lineage(List.of(), rootfs, envdDir);
            overlays.mount(boot.lowers(dirs.layers()), dirs.upper(), dirs.work(), dirs.rootfs());
            GuestProcFiles.writeBootId(dirs, GuestProcFiles.newBootId()); // each restore is given its own
            RuncRuntime.writeConfig(
                    dirs.bundle(),
                    specs.build(
                            id,
                            dirs,
                            slot,
                            "sandbox",
                            boot,
                            settings.resources(),
                            List.of(),
                            BOOT_ENVD_ARGS,
                            List.of()));
            if (!preparation.isEmpty()) {
                Files.writeString(dirs.envd().resolve(EnvdLayout.PREPARATION), preparation);
            }
            runc.create(id, dirs.bundle());
            GuestProcFiles.mount(Generation.initPid(dirs), dirs);
            runc.start(id);
            if (!preparation.isEmpty()) {
                awaitPreparation(template, dirs, clock.instant().plus(BOOT_TIMEOUT));
            }
            try (EnvdClient client = envdClients.open(
                    new SandboxId("template000000000000"), ContainerSandbox.envdAddress(slot), Optional.empty())) {
                client.waitUntilReady(clock.instant().plus(BOOT_TIMEOUT));
            }
            Files.createDirectories(partial);
            runc.checkpoint(
                    id, partial.resolve("images"), dirs.dir().resolve("dump-work"), RuncRuntime.AfterCheckpoint.STOP);
            runc.delete(id);
            overlays.unmount(dirs.rootfs());
            layerFiles.move(dirs.upper(), partial.resolve("layer"));
            Files.writeString(partial.resolve(READY), template + "\n");
            FileTrees.deleteTree(dir);
            Files.move(partial, dir);
        } catch (IOException | CommandFailedException | EnvdException e) {
            throw new BackendException.Terminal(
                    "could not build the boot image of template " + template + ": " + e.getMessage() + "\nenvd log:\n"
                            + EnvdLogs.tail(dirs),
                    e);
        } finally {
            cleanUp(id, dirs, slot, partial);
        }
        log.atInfo()
                .addKeyValue("template", template)
                .addKeyValue("dir", dir)
                .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                .log("template boot image built");
        return image;
    }

    /**
     * Waits for the boot's supervisor to report how the image's preparation ended; a failure ends the boot with its
     * exit status and the end of its output. The files are written by the container's root: read without following
     * links, and only so much of them.
     */
    private void awaitPreparation(String template, SandboxDirs dirs, Instant deadline)
            throws BackendException, IOException, InterruptedException {
        Path status = dirs.envd().resolve(EnvdLayout.PREPARATION_STATUS);
        while (!Files.exists(status, LinkOption.NOFOLLOW_LINKS)) {
            if (clock.instant().isAfter(deadline)) {
                throw new BackendException.Terminal(
                        "the preparation of template " + template + " did not finish within " + BOOT_TIMEOUT);
            }
            Thread.sleep(PREPARATION_POLL);
        }
        String exit = guestTail(status, 32).strip();
        if (!exit.equals("0")) {
            String output = guestTail(dirs.envd().resolve(EnvdLayout.PREPARATION_LOG), 4096);
            throw new BackendException.Terminal("the image of template " + template
                    + " could not be prepared (exit code " + exit + "):\n" + output);
        }
    }

    /** The last {@code max} bytes of a file the container wrote, as text; empty when it is not a regular file. */
    private static String guestTail(Path file, int max) throws IOException {
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return "";
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        GuestFileReads.copyTail(file, max, Channels.newChannel(out));
        return out.toString(StandardCharsets.UTF_8);
    }

    private void cleanUp(ContainerId id, SandboxDirs dirs, NetSlot slot, Path partial) throws InterruptedException {
        try {
            runc.delete(id);
            overlays.unmount(dirs.rootfs());
            if (slot != null) {
                pool.release(slot);
            }
            FileTrees.deleteTree(dirs.dir());
            FileTrees.deleteTree(partial);
        } catch (IOException | CommandFailedException e) {
            log.atWarn()
                    .addKeyValue("sandbox_id", id.value())
                    .setCause(e)
                    .log("template boot container not fully removed");
        }
    }
}
