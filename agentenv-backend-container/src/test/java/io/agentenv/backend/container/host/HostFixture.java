package io.agentenv.backend.container.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.agentenv.backend.container.guest.GuestMounts;
import io.agentenv.backend.container.guest.LxcfsViews;
import io.agentenv.backend.container.leftovers.HostInventory;
import io.agentenv.backend.container.leftovers.Leftovers;
import io.agentenv.backend.container.network.EgressFirewall;
import io.agentenv.backend.container.network.NetSlot;
import io.agentenv.backend.container.network.NetnsPool;
import io.agentenv.backend.container.runtime.ContainerSpec;
import io.agentenv.backend.container.runtime.CpuSets;
import io.agentenv.backend.container.runtime.OciSpecs;
import io.agentenv.backend.container.runtime.RuncRuntime;
import io.agentenv.backend.container.storage.IdmappedViews;
import io.agentenv.backend.container.storage.OverlayMounts;
import io.agentenv.backend.container.storage.SandboxDirs;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * The real building blocks wired against this host, for tests tagged "host". Such tests need root and a host set up
 * by scripts/setup-host.sh; otherwise they are skipped with the reason, or fail when AENV_REQUIRE_HOST_TESTS=1
 * (scripts/test.sh sets it when it ran the setup). Every fixture uses its own container-id prefix, netns/veth prefix
 * and slot range, and {@link #close()} asserts that nothing it created is left on the host.
 */
public final class HostFixture implements AutoCloseable {

    private static final Duration POLL = Duration.ofMillis(5);
    private static final Path TEMP = Path.of("/var/tmp");

    public final ProcessRunner runner = new JdkProcessRunner();
    public final HostLayout layout;
    public final OciSpecs ociSpecs;
    public final OverlayMounts overlays;
    public final EgressFirewall firewall;
    public final NetnsPool pool;
    public final RuncRuntime runc;
    public final CgroupTree cgroups;
    public final HostInventory inventory;
    public final Path sandboxesDir;
    public final String idPrefix;
    /** The pool uses the lane's first half of slots; tests may build other pools in the second half. */
    public final int firstSlot;

    /** The ids the fixture's containers map their ids onto (a range of their own, as a server's). */
    public static final GuestIds GUEST_IDS = new GuestIds(1_100_000_000, 65536);

    private static Path viewsDir(Path sandboxesDir) {
        return sandboxesDir.resolveSibling(sandboxesDir.getFileName() + "-idmapped");
    }

    /** The network a container of {@code slot} gets. */
    public static ContainerSpec.Network network(NetSlot slot) {
        return new ContainerSpec.Network(slot.hostVeth(), slot.sandboxAddress(), slot.hostAddress(), slot.netnsPath());
    }

    private final TestLane lane;
    private final IdmappedViews views;

    private HostFixture(TestLane lane, HostLayout layout, Path sandboxesDir) throws IOException {
        this.lane = lane;
        this.layout = layout;
        this.sandboxesDir = sandboxesDir;
        this.idPrefix = lane.idPrefix() + UUID.randomUUID().toString().substring(0, 8) + "-";
        this.ociSpecs = new OciSpecs(
                layout.cgroupParent(),
                layout.swapAccounting(),
                GuestMounts.prepare(layout),
                new LxcfsViews(LxcfsViews.HOST_DIR),
                CpuSets.of(layout.cgroupRoot().resolve("cpuset"), layout.cgroupParent()));
        // beside the sandboxes' dir, as a backend's are: the inventory's scan of that dir sees sandboxes' mounts only
        // sandboxes' runtimes mount from here as their user namespace's root, an unprivileged id: let it through
        try {
            GuestPassage.grant(runner, GUEST_IDS, sandboxesDir);
            GuestPassage.grant(
                    runner, GUEST_IDS, GuestMounts.prepare(layout).dev().getParent());
        } catch (CommandFailedException | InterruptedException e) {
            throw new IOException("could not let the sandboxes' root id through " + sandboxesDir, e);
        }
        this.views = new IdmappedViews(viewsDir(sandboxesDir), GUEST_IDS);
        this.overlays = new OverlayMounts(views);
        this.firewall = new EgressFirewall(runner);
        this.firstSlot = lane.firstSlot(layout.addressing());
        this.pool = new NetnsPool(runner, firewall, layout, firstSlot, TestLane.SLOTS_PER_LANE / 2);
        this.runc = new RuncRuntime(runner, layout, Duration.ofSeconds(30), Duration.ofSeconds(60));
        this.cgroups = new CgroupTree(layout);
        this.inventory = new HostInventory(runc, cgroups, overlays, pool, sandboxesDir);
    }

    /**
     * Skips the calling test with the reason the host cannot run it, or fails it when host tests are required
     * (AENV_REQUIRE_HOST_TESTS=1, set by scripts/test.sh after it ran the setup).
     */
    public static void requireHost(Optional<String> unready) {
        if (unready.isPresent()) {
            if ("1".equals(System.getenv("AENV_REQUIRE_HOST_TESTS"))) {
                fail("host tests are required but " + unready.get());
            }
            Assumptions.abort("host test skipped: " + unready.get());
        }
    }

    /** A fixture, or the test is skipped (failed, if host tests are required) with the reason the host is not ready. */
    public static HostFixture create() throws Exception {
        Optional<String> unready = HostLayout.unreadyReason(HostLayout.DEFAULT_HOST_ENV)
                .or(() -> new LxcfsViews(LxcfsViews.HOST_DIR).unavailableReason());
        HostFixture.requireHost(unready);
        TestLane lane = TestLane.claim();
        try {
            HostLayout layout = HostLayout.load(HostLayout.DEFAULT_HOST_ENV)
                    .isolatedAs(lane.namePrefix(), lane.runDir(), TestLane.CGROUP_PARENT);
            Path dir = Files.createTempDirectory(TEMP, lane.dirPrefix());
            HostFixture fixture = new HostFixture(lane, layout, dir);
            fixture.reapDeadRuns();
            return fixture;
        } catch (Exception | Error e) {
            lane.close();
            throw e;
        }
    }

    /** Removes what dead runs that held this lane left: containers, cgroups, mounts, temp dirs, network slots. */
    private void reapDeadRuns() throws Exception {
        inventory.reap(lane.idPrefix()); // its mount scan covers only this run's (new, empty) dir
        pool.reapLeftovers();
        try (Stream<Path> dirs = Files.list(TEMP)) {
            for (Path old : dirs.filter(d -> d.getFileName().toString().startsWith(lane.dirPrefix())
                            && !d.equals(sandboxesDir)
                            && !d.equals(viewsDir(sandboxesDir)))
                    .toList()) {
                for (Path mount : MountTable.mountsUnder(old)) {
                    overlays.unmount(mount);
                }
                deleteTree(old);
            }
        }
    }

    /** This run's lane (0..35): tests that need other unique host names or addresses derive them from it. */
    public int lane() {
        return lane.number();
    }

    public ContainerId newId(String suffix) {
        return new ContainerId(idPrefix + suffix);
    }

    public Path templateRootfs() throws IOException {
        return layout.templateRootfs("base");
    }

    public static final ContainerSpec.Limits LIMITS = new ContainerSpec.Limits(1, 512, 256, 16384);
    public static final Path JDK = Path.of(System.getProperty("java.home"));

    /** One sandbox's id, directories and network slot. */
    public record Sandbox(ContainerId id, SandboxDirs dirs, NetSlot slot) {
        Path dir() {
            return dirs.dir();
        }

        public Path upper() {
            return dirs.upper();
        }

        Path work() {
            return dirs.work();
        }

        public Path rootfs() {
            return dirs.rootfs();
        }

        public Path envd() {
            return dirs.envd();
        }

        public Path bundle() {
            return dirs.bundle();
        }

        public Path restoreWork() {
            return dirs.restoreWork();
        }
    }

    /** A config for a sandbox that runs {@code args} as root in {@code rootfs}, attached to {@code slot}. */
    public ContainerSpec spec(
            Sandbox sandbox, List<String> args, ContainerSpec.Limits limits, ContainerSpec.Privileges privileges) {
        return spec(sandbox, args, limits, privileges, List.of());
    }

    public ContainerSpec spec(
            Sandbox sandbox,
            List<String> args,
            ContainerSpec.Limits limits,
            ContainerSpec.Privileges privileges,
            List<ContainerSpec.ReadOnlyBind> binds) {
        return new ContainerSpec(
                sandbox.id(),
                sandbox.rootfs(),
                "sandbox",
                new ContainerSpec.InitProcess(
                        args,
                        List.of("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root"),
                        "/",
                        0,
                        0),
                network(sandbox.slot()),
                GUEST_IDS,
                limits,
                Optional.of(JDK),
                binds,
                sandbox.envd(),
                "/run/envd",
                Optional.of(layout.resolvConf()),
                layout.criuRuncConfig(),
                privileges);
    }

    /** Takes a slot, mounts the overlay and writes the bundle's config; nothing runs yet. */
    public Sandbox prepare(
            String name,
            List<Path> lowers,
            List<String> args,
            ContainerSpec.Limits limits,
            ContainerSpec.Privileges privileges)
            throws Exception {
        ContainerId id = newId(name);
        Sandbox sandbox = new Sandbox(id, SandboxDirs.of(sandboxesDir, id), pool.acquire());
        Files.createDirectories(sandbox.envd());
        Files.setAttribute(sandbox.envd(), "unix:uid", GUEST_IDS.hostStart());
        Files.setAttribute(sandbox.envd(), "unix:gid", GUEST_IDS.hostStart());
        overlays.mount(lowers, sandbox.upper(), sandbox.work(), sandbox.rootfs());
        RuncRuntime.writeConfig(sandbox.bundle(), ociSpecs.build(spec(sandbox, args, limits, privileges)));
        return sandbox;
    }

    public Sandbox prepare(String name, List<Path> lowers, List<String> args) throws Exception {
        return prepare(name, lowers, args, LIMITS, ContainerSpec.Privileges.NO_NEW_PRIVILEGES);
    }

    /** Prepares, creates and starts a sandbox from the base template. */
    public Sandbox run(String name, List<String> args, ContainerSpec.Limits limits, ContainerSpec.Privileges privileges)
            throws Exception {
        Sandbox sandbox = prepare(name, List.of(templateRootfs()), args, limits, privileges);
        runc.create(sandbox.id(), sandbox.bundle());
        runc.start(sandbox.id());
        return sandbox;
    }

    /**
     * Gives a slot a network namespace the way a sandbox's runtime does (a new one in a user namespace of the guests'
     * ids, with the slot's veth pair made into it and pinned at the slot's netns path by
     * {@link OciSpecs#NETWORK_HOOK}), for tests of the network alone.
     */
    public void plumb(NetSlot slot) throws Exception {
        Process holder = new ProcessBuilder("unshare", "--user", "--net", "sleep", "60")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        try {
            String own = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString();
            Path ns = Path.of("/proc", Long.toString(holder.pid()), "ns", "net");
            await("unshare made the network namespace", Duration.ofSeconds(10), () -> {
                try {
                    return !Files.readSymbolicLink(ns).toString().equals(own);
                } catch (IOException e) {
                    return false;
                }
            });
            GUEST_IDS.mapNamespaceOf(holder.pid());
            runner.run(Command.of(
                            Duration.ofSeconds(20),
                            "sh",
                            "-c",
                            OciSpecs.NETWORK_HOOK,
                            "agentenv-network",
                            slot.hostVeth(),
                            slot.sandboxAddress(),
                            slot.hostAddress(),
                            slot.netnsPath().toString())
                    .withStdin(("{\"ociVersion\":\"1.0.2\",\"pid\":" + holder.pid() + "}")
                            .getBytes(StandardCharsets.UTF_8)));
        } finally {
            holder.destroyForcibly();
            holder.waitFor();
        }
    }

    /** Deletes the container, unmounts its overlay and releases its slot. */
    public void destroy(Sandbox sandbox) throws Exception {
        runc.delete(sandbox.id());
        overlays.unmount(sandbox.rootfs());
        pool.release(sandbox.slot());
    }

    /** Runs a program inside and returns its stdout, stripped; fails the test on a non-zero exit. */
    public String exec(Sandbox sandbox, String... args) throws Exception {
        return runc.exec(sandbox.id(), List.of(args), Duration.ofSeconds(30))
                .stdout()
                .strip();
    }

    /** Runs a program inside and returns how it failed (it must fail). */
    public CommandFailedException execFailure(Sandbox sandbox, String... args) throws Exception {
        try {
            CommandResult result = runc.exec(sandbox.id(), List.of(args), Duration.ofSeconds(30));
            return fail("expected `%s` to fail inside, it printed %s", String.join(" ", args), result.stdout());
        } catch (CommandFailedException expected) {
            return expected;
        }
    }

    /** Asserts nothing is left, then removes whatever is (so one failure does not cascade) and the temp dir. */
    @Override
    public void close() throws Exception {
        try {
            pool.close();
            views.close();
            Leftovers left = inventory.scan(idPrefix);
            assertThat(left.isEmpty())
                    .as("host resources left behind: %s", left)
                    .isTrue();
        } finally {
            try {
                inventory.reap(idPrefix);
                deleteTree(sandboxesDir);
                deleteTree(viewsDir(sandboxesDir));
            } finally {
                lane.close();
            }
        }
    }

    /** Waits for a condition with a deadline (no fixed sleeps in tests). */
    public static void await(String what, Duration timeout, BooleanSupplier condition) {
        Instant deadline = Instant.now().plus(timeout);
        while (!condition.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                fail("timed out after " + timeout + " waiting until " + what);
            }
            LockSupport.parkNanos(POLL.toNanos());
        }
    }

    public static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
