package io.agentenv.backend.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.agentenv.backend.container.guest.LxcfsViews;
import io.agentenv.backend.container.host.CgroupTree;
import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.CommandFailedException;
import io.agentenv.backend.container.host.CommandResult;
import io.agentenv.backend.container.host.FileTrees;
import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.host.HostLayout;
import io.agentenv.backend.container.host.JdkProcessRunner;
import io.agentenv.backend.container.host.MountTable;
import io.agentenv.backend.container.host.ProcessRunner;
import io.agentenv.backend.container.host.TestLane;
import io.agentenv.backend.container.leftovers.HostInventory;
import io.agentenv.backend.container.leftovers.Leftovers;
import io.agentenv.backend.container.lifecycle.ContainerSettings;
import io.agentenv.backend.container.network.EgressFirewall;
import io.agentenv.backend.container.network.NetnsPool;
import io.agentenv.backend.container.runtime.RuncRuntime;
import io.agentenv.backend.container.storage.IdmappedViews;
import io.agentenv.backend.container.storage.LoopDevices;
import io.agentenv.backend.container.storage.OverlayMounts;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.BackendException;
import io.agentenv.spi.EnvdTokens;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.SharedFiles;
import io.agentenv.spi.TemplateId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * A real {@link ContainerBackendFactory} on this host for tests tagged "host", on its own test lane (names, slots,
 * runc root and cgroup parent apart from a server's and from other runs), with a temp work dir under /var/tmp (one
 * filesystem with the artifacts, as in a server's data dir). Sandboxes a test starts through {@link #launch} are closed
 * by {@link #closeLaunched()}, then {@link #assertNothingLeaked()} is the leak check ({@link SharedBackend} runs both
 * after every test); {@link #close()} shuts the backend down and removes everything.
 */
public final class BackendFixture implements AutoCloseable {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final TemplateId BASE = new TemplateId("base");

    private static final Path TEMP = Path.of("/var/tmp");
    /** How long a launch may take to answer (a cold boot on a busy host included). */
    static final Duration READY = Duration.ofSeconds(60);

    final ContainerBackendFactory factory;
    final Path workDir;
    final String idPrefix;
    private final TestLane lane;
    private final HostLayout layout;
    private final Optional<EnvdTokens> tokens;
    private final Optional<SharedFiles> sharedFiles;
    private final List<SandboxBackend> launched = new ArrayList<>();

    private BackendFixture(
            TestLane lane,
            HostLayout layout,
            Path workDir,
            ContainerBackendFactory factory,
            String idPrefix,
            Optional<EnvdTokens> tokens,
            Optional<SharedFiles> sharedFiles) {
        this.lane = lane;
        this.layout = layout;
        this.tokens = tokens;
        this.sharedFiles = sharedFiles;
        this.workDir = workDir;
        this.factory = factory;
        this.idPrefix = idPrefix;
    }

    /** A new sandbox of the base template: a random id and token, user "user", no env vars, the default network policy. */
    static LaunchSpec baseSpec() {
        return new LaunchSpec(
                SandboxId.random(RANDOM),
                BASE,
                Map.of(),
                "user",
                new AccessToken("tok-" + RANDOM.nextInt()),
                NetworkPolicy.DEFAULT);
    }

    /** The token a server would derive for {@code id} (what {@link #createWithTokens} gives the backend). */
    static AccessToken token(SandboxId id) {
        return new AccessToken("tok-" + id.value());
    }

    /** An initialized backend, or the test is skipped (failed, if host tests are required) when the host is not ready. */
    public static BackendFixture create(Map<String, String> extraSettings) throws Exception {
        return create(extraSettings, Optional.empty(), Optional.empty());
    }

    /** As {@link #create}, with the server's token derivation {@link #token}: warm members can be reserved. */
    static BackendFixture createWithTokens(Map<String, String> extraSettings) throws Exception {
        return create(extraSettings, Optional.of(BackendFixture::token), Optional.empty());
    }

    /** As {@link #create}, as a node of a cluster whose shared storage is {@code sharedFiles}. */
    static BackendFixture createSharing(SharedFiles sharedFiles) throws Exception {
        return create(Map.of(), Optional.empty(), Optional.of(sharedFiles));
    }

    private static BackendFixture create(
            Map<String, String> extraSettings, Optional<EnvdTokens> tokens, Optional<SharedFiles> sharedFiles)
            throws Exception {
        Path lxcfsDir = Path.of(extraSettings.getOrDefault("lxcfs_dir", LxcfsViews.HOST_DIR.toString()));
        Optional<String> unready = HostLayout.unreadyReason(HostLayout.DEFAULT_HOST_ENV)
                .or(() -> new LxcfsViews(lxcfsDir).unavailableReason());
        HostFixture.requireHost(unready);
        TestLane lane = TestLane.claim();
        try {
            HostLayout layout = HostLayout.load(HostLayout.DEFAULT_HOST_ENV)
                    .isolatedAs(lane.namePrefix(), lane.runDir(), TestLane.CGROUP_PARENT);
            reapDeadRuns(lane, layout);
            Path workDir = Files.createTempDirectory(TEMP, lane.dirPrefix());
            String idPrefix = lane.idPrefix() + UUID.randomUUID().toString().substring(0, 6) + "-";
            Map<String, String> settings = new java.util.HashMap<>(Map.of(
                    "envd_dir",
                    envdDir().toString(),
                    "jdk_home",
                    System.getProperty("java.home"),
                    "id_prefix",
                    idPrefix,
                    "max_sandboxes",
                    Integer.toString(TestLane.SLOTS_PER_LANE / 2),
                    "memory_mb",
                    "256",
                    "cpu_count",
                    "1",
                    "pool_size",
                    "0"));
            settings.putAll(extraSettings);
            ContainerBackendFactory factory = new ContainerBackendFactory();
            factory.initialize(
                    workDir,
                    ContainerSettings.from(settings, Path.of("").toAbsolutePath()),
                    layout,
                    lane.firstSlot(layout.addressing()) + TestLane.SLOTS_PER_LANE / 2,
                    tokens,
                    sharedFiles);
            factory.reapUnclaimed(java.util.Set.of());
            return new BackendFixture(lane, layout, workDir, factory, idPrefix, tokens, sharedFiles);
        } catch (Exception | Error e) {
            lane.close();
            throw e;
        }
    }

    /** The envd distribution Maven built (this module's tests run after agentenv-envd in the reactor). */
    static Path envdDir() {
        Path dir = Path.of("../agentenv-envd/target").toAbsolutePath().normalize();
        if (!Files.isRegularFile(dir.resolve("agentenv-envd.jar"))) {
            fail("envd is not built at " + dir + " (mvn -pl agentenv-envd -am package)");
        }
        return dir;
    }

    /** What dead runs on this lane left in the lane's second half of slots, runc root and cgroups. */
    private static void reapDeadRuns(TestLane lane, HostLayout layout) throws Exception {
        ProcessRunner runner = new JdkProcessRunner();
        OverlayMounts overlays = new OverlayMounts(
                new IdmappedViews(TEMP.resolve(lane.dirPrefix() + "idmapped"), HostFixture.GUEST_IDS));
        NetnsPool pool = new NetnsPool(
                runner,
                new EgressFirewall(runner),
                layout,
                lane.firstSlot(layout.addressing()),
                TestLane.SLOTS_PER_LANE);
        new HostInventory(
                        new RuncRuntime(runner, layout, Duration.ofSeconds(30), Duration.ofSeconds(60)),
                        new CgroupTree(layout),
                        overlays,
                        pool,
                        TEMP.resolve("none"))
                .reap(lane.idPrefix());
        try (var dirs = Files.list(TEMP)) {
            for (Path old : dirs.filter(d -> d.getFileName().toString().startsWith(lane.dirPrefix()))
                    .toList()) {
                for (Path mount : MountTable.mountsUnder(old)) {
                    overlays.unmount(mount);
                }
                runner.run(Command.of(Duration.ofMinutes(2), "rm", "-rf", "--one-file-system", old.toString()));
            }
        }
    }

    /** This run's lane (0..35), for other per-run host names and addresses. */
    int lane() {
        return lane.number();
    }

    /** Runs a program in a sandbox's container (runc exec, as root) and returns its stdout, stripped. */
    String exec(io.agentenv.spi.SandboxId id, String... args) throws Exception {
        return factory.runc()
                .exec(factory.names().containerId(id), List.of(args), Duration.ofSeconds(30))
                .stdout()
                .strip();
    }

    /** Like {@link #exec} but returns the failure (the program must fail). */
    CommandFailedException execFailure(io.agentenv.spi.SandboxId id, String... args) throws Exception {
        try {
            CommandResult result =
                    factory.runc().exec(factory.names().containerId(id), List.of(args), Duration.ofSeconds(30));
            return fail("expected `%s` to fail, it printed %s", String.join(" ", args), result.stdout());
        } catch (CommandFailedException expected) {
            return expected;
        }
    }

    /** Prepares and starts a sandbox from {@code source}; {@link #closeLaunched()} closes it. */
    SandboxBackend launch(LaunchSpec spec, LaunchSource source) throws BackendException {
        return start(closeLater(factory.prepare(spec, source)));
    }

    /** {@link #launch} from the spec's template. */
    SandboxBackend fresh(LaunchSpec spec) throws BackendException {
        return launch(spec, new LaunchSource.Template(spec.template()));
    }

    /** Starts a prepared sandbox (already {@link #closeLater registered}) within {@link #READY}. */
    static SandboxBackend start(SandboxBackend sandbox) throws BackendException {
        sandbox.start(READY);
        return sandbox;
    }

    /** Registers a sandbox the test prepared or re-attached itself, for {@link #closeLaunched()}. */
    synchronized <S extends SandboxBackend> S closeLater(S sandbox) {
        launched.add(sandbox);
        return sandbox;
    }

    /** Forgets the launched sandboxes without closing them: abandoned, as by a server's kill -9. */
    synchronized void abandonLaunched() {
        launched.clear();
    }

    /** Closes every sandbox launched or registered since the last call (in that order; closing twice is harmless). */
    void closeLaunched() throws Exception {
        List<SandboxBackend> toClose;
        synchronized (this) {
            toClose = List.copyOf(launched);
            launched.clear();
        }
        Exception failed = null;
        for (SandboxBackend sandbox : toClose) {
            try {
                sandbox.close();
            } catch (Exception e) {
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    /** A new artifact dir's path on the backend's filesystem (as the orchestrator's under the data dir); not made. */
    Path artifacts(String name) throws IOException {
        Path dir = workDir.resolve("artifacts-" + name + "-" + Long.toHexString(RANDOM.nextLong()));
        Files.createDirectories(dir.getParent());
        return dir;
    }

    /**
     * The leak check: no container, cgroup, process, mount (under the sandboxes dir or runc's state dirs, where a failed
     * restore leaves its criu-root), sandbox dir or disk's loop device of this backend is left, and no network
     * namespace beyond the pre-created ready ones.
     */
    void assertNothingLeaked() throws Exception {
        ContainerBackendFactory p = factory;
        p.deferredReleases().awaitAll(); // what pauses release after they answered
        HostInventory inventory = new HostInventory(
                p.runc(), p.cgroups(), p.overlays(), p.pool(), p.names().sandboxesDir());
        Leftovers left = inventory.scan(idPrefix);
        assertThat(left.containers()).as("containers left").isEmpty();
        assertThat(left.cgroups()).as("cgroups left").isEmpty();
        assertThat(left.processes()).as("processes left").isEmpty();
        assertThat(left.mounts()).as("mounts left").isEmpty();
        assertThat(left.stateDirs()).as("runc state dirs left").isEmpty();
        try (var dirs = Files.list(p.names().sandboxesDir())) {
            assertThat(dirs.toList()).as("sandbox dirs left").isEmpty();
        }
        awaitNoLoopDevicesUnder(workDir);
        long netns = left.network().stream()
                .filter(n -> n.startsWith(p.pool().netnsPrefix()))
                .count();
        assertThat(netns)
                .as("network namespaces beyond the warm one: %s", left.network())
                .isLessThanOrEqualTo(1);
    }

    /** Shuts the backend down, asserts that then nothing at all is left, and removes the work dir. */
    @Override
    public void close() throws Exception {
        try {
            factory.shutdown();
            ContainerBackendFactory p = factory;
            HostInventory inventory = new HostInventory(
                    p.runc(), p.cgroups(), p.overlays(), p.pool(), p.names().sandboxesDir());
            awaitNoLoopDevicesUnder(workDir); // a disk's loop device clears itself a moment after its unmount
            Leftovers left = inventory.scan(idPrefix);
            assertThat(left.isEmpty())
                    .as("host resources left after shutdown: %s", left)
                    .isTrue();
            assertThat(workDir.resolve("spare-disks"))
                    .as("spare disk images left after shutdown")
                    .doesNotExist();
        } finally {
            try {
                ContainerBackendFactory p = factory;
                new HostInventory(
                                p.runc(),
                                p.cgroups(),
                                p.overlays(),
                                p.pool(),
                                p.names().sandboxesDir())
                        .reap(idPrefix);
                for (Path mount : MountTable.mountsUnder(workDir)) {
                    p.overlays().unmount(mount);
                }
                FileTrees.deleteTree(workDir);
            } finally {
                lane.close();
            }
        }
    }

    HostLayout layout() {
        return layout;
    }

    /**
     * A second backend on the same work dir, host layout and slots, as a restarted server would build it (the first one
     * is abandoned without shutdown, like a process killed with -9).
     */
    ContainerBackendFactory restarted() throws BackendException {
        return onAnotherWorkDir(workDir);
    }

    /**
     * A second backend with the same settings, host layout and slots on {@code workDir}: this one's (a restart), or a
     * new one of this lane ({@link #newWorkDir()}, removed by the lane's next run if a test dies), as another node of
     * the cluster would be; its caller shuts it down and deletes a new work dir.
     */
    ContainerBackendFactory onAnotherWorkDir(Path workDir) throws BackendException {
        ContainerBackendFactory other = new ContainerBackendFactory();
        other.initialize(
                workDir,
                factory.settings(),
                layout,
                lane.firstSlot(layout.addressing()) + TestLane.SLOTS_PER_LANE / 2,
                tokens,
                sharedFiles);
        return other;
    }

    /** A new, empty work dir of this lane (see {@link #onAnotherWorkDir}). */
    Path newWorkDir() throws IOException {
        return Files.createTempDirectory(TEMP, lane.dirPrefix());
    }

    /**
     * No loop device of a sandbox disk below {@code dir} is left. A disk's loop device clears itself on the last close
     * after its unmount, which may be a moment later when another process (a concurrent {@code mount -o loop} scanning
     * the devices) had it open: waited for, with a deadline.
     */
    public static void awaitNoLoopDevicesUnder(Path dir) throws Exception {
        HostFixture.await("no loop device is backed by a file under " + dir, Duration.ofSeconds(10), () -> {
            try {
                return loopDevicesBackedUnder(dir).isEmpty();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(loopDevicesBackedUnder(dir))
                .as("loop devices of sandbox disks left")
                .isEmpty();
    }

    /** Loop devices whose backing file is below {@code dir}. */
    static List<String> loopDevicesBackedUnder(Path dir) throws Exception {
        return LoopDevices.backedUnder(dir).stream()
                .map(LoopDevices.Attached::toString)
                .toList();
    }
}
