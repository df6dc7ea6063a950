package io.agentenv.server.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.agentenv.orchestrator.Orchestrator;
import io.agentenv.orchestrator.OrchestratorSettings;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.BackendContext;
import io.agentenv.spi.SandboxBackendFactory;
import io.agentenv.spi.SandboxId;
import io.agentenv.store.sqlite.SqliteSandboxStore;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * The orchestrator on a real SQLite file with the real container backend, found through ServiceLoader as the server
 * finds it, apart from a running server's names: netns/veth prefix {@code aenvs}, its own runc state dir, the tests'
 * cgroup parent, container ids {@code srv-…}, network slots from 8192. One run at a time per host (a file lock);
 * whatever a dead run left is removed first. {@link #assertNothingLeaked()} is the leak check after every test.
 */
final class ContainerServerFixture implements AutoCloseable {

    private static final Path RUN_DIR = Path.of("/run/agentenv/server-tests");
    private static final Path TEMP = Path.of("/var/tmp");
    private static final String DIR_PREFIX = "aenv-srv-";
    private static final String ID_PREFIX = "srv-";
    private static final Duration RELEASE_WAIT = Duration.ofSeconds(10);
    static final Map<String, String> SETTINGS = Map.ofEntries(
            Map.entry("name_prefix", "aenvs"),
            Map.entry("run_dir", RUN_DIR.toString()),
            Map.entry("cgroup_parent", "agentenv-tests"),
            Map.entry("first_slot", "8192"),
            Map.entry("max_sandboxes", "32"),
            Map.entry("id_prefix", ID_PREFIX),
            Map.entry("memory_mb", "256"),
            Map.entry("cpu_count", "1"),
            Map.entry("pool_size", "0"),
            Map.entry(
                    "envd_dir",
                    Path.of("../agentenv-envd/target")
                            .toAbsolutePath()
                            .normalize()
                            .toString()));

    final Path dataDir;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private SandboxBackendFactory backend;
    private SqliteSandboxStore store;
    Orchestrator orchestrator;

    private ContainerServerFixture(Path dataDir, FileChannel lockChannel, FileLock lock) {
        this.dataDir = dataDir;
        this.lockChannel = lockChannel;
        this.lock = lock;
    }

    /** A started orchestrator, or the test is skipped (failed when host tests are required) on an unprepared host. */
    static ContainerServerFixture create() throws Exception {
        String unready = unreadyReason();
        if (unready != null) {
            if ("1".equals(System.getenv("AENV_REQUIRE_HOST_TESTS"))) {
                fail("host tests are required but " + unready);
            }
            Assumptions.abort("host test skipped: " + unready);
        }
        Files.createDirectories(RUN_DIR);
        FileChannel channel =
                FileChannel.open(RUN_DIR.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock = channel.lock();
        try {
            removeDeadRuns();
            ContainerServerFixture fixture =
                    new ContainerServerFixture(Files.createTempDirectory(TEMP, DIR_PREFIX), channel, lock);
            fixture.open();
            return fixture;
        } catch (Exception | Error e) {
            lock.release();
            channel.close();
            throw e;
        }
    }

    private static String unreadyReason() throws IOException {
        if (!Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"))) {
            return "not running as root";
        }
        if (!Files.isRegularFile(Path.of("/run/agentenv/host-ready"))
                || !Files.isRegularFile(Path.of("/var/cache/agentenv/host.env"))) {
            return "scripts/setup-host.sh has not been run since this boot";
        }
        return null;
    }

    /** Builds the backend and the orchestrator on the data dir (recovery runs in start()). */
    private void open() throws Exception {
        backend = ServiceLoader.load(SandboxBackendFactory.class).stream()
                .map(ServiceLoader.Provider::get)
                .filter(f -> f.name().equals("container"))
                .findFirst()
                .orElseThrow();
        backend.initialize(new BackendContext(
                Files.createDirectories(dataDir.resolve("backend/container")),
                SETTINGS,
                Optional.of(ContainerServerFixture::token)));
        store = SqliteSandboxStore.open(dataDir.resolve("agentenv.db"));
        orchestrator = new Orchestrator(
                store,
                backend,
                ContainerServerFixture::token,
                Clock.systemUTC(),
                new OrchestratorSettings(
                        dataDir.resolve("artifacts"),
                        Duration.ofSeconds(60),
                        Duration.ofSeconds(60),
                        Duration.ofSeconds(1),
                        4,
                        "user"),
                List.of());
        orchestrator.start();
    }

    static AccessToken token(SandboxId id) {
        return new AccessToken("token-" + id.value());
    }

    /**
     * A crash and a restart: the orchestrator and backend are abandoned without shutdown (as kill -9 leaves them), the
     * store file is closed, and a new backend and orchestrator start on the same data dir and SQLite file.
     */
    void restart() throws Exception {
        store.close();
        open();
    }

    /**
     * No container, cgroup, mount or sandbox dir of the backend is left, and no netns beyond the warm one, within a few
     * seconds: a kill answers before its release is done (the backend finishes it in the background).
     */
    void assertNothingLeaked() throws Exception {
        long deadline = System.nanoTime() + RELEASE_WAIT.toNanos();
        while (true) {
            try {
                checkNothingLeft();
                return;
            } catch (AssertionError | IOException left) {
                // IOException: runc's list fails as a whole when a container it saw is deleted before it looks into
                // it, which a kill's release (after the kill's answer) may be doing right now
                if (System.nanoTime() > deadline) {
                    throw left;
                }
                LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
            }
        }
    }

    private void checkNothingLeft() throws Exception {
        String containers = run("runc", "--root", RUN_DIR.resolve("runc").toString(), "list", "-q");
        assertThat(containers.lines().filter(l -> l.startsWith(ID_PREFIX)).toList())
                .as("containers left")
                .isEmpty();
        List<String> cgroups = new ArrayList<>();
        try (Stream<Path> controllers = Files.list(Path.of("/sys/fs/cgroup"))) {
            for (Path controller : controllers.toList()) {
                Path parent = controller.resolve("agentenv-tests");
                if (Files.isDirectory(parent)) {
                    try (Stream<Path> groups = Files.list(parent)) {
                        groups.map(p -> p.getFileName().toString())
                                .filter(n -> n.startsWith(ID_PREFIX))
                                .forEach(cgroups::add);
                    }
                }
            }
        }
        assertThat(cgroups).as("cgroups left").isEmpty();
        // the backend's idmapped views of template trees live until its shutdown (checked in close())
        String views = dataDir.resolve("backend/container/idmapped").toString();
        assertThat(Files.readString(Path.of("/proc/self/mountinfo"))
                        .lines()
                        .filter(line -> line.contains(dataDir.toString()) && !line.contains(views + "/"))
                        .toList())
                .as("mounts left")
                .isEmpty();
        Path sandboxes = dataDir.resolve("backend/container/sandboxes");
        try (Stream<Path> dirs = Files.list(sandboxes)) {
            assertThat(dirs.toList()).as("sandbox dirs left").isEmpty();
        }
        try (Stream<Path> netns = Files.list(Path.of("/run/netns"))) {
            assertThat(netns.filter(p -> p.getFileName().toString().startsWith("aenvs-n"))
                            .count())
                    .as("network namespaces beyond the warm one")
                    .isLessThanOrEqualTo(1);
        }
    }

    @Override
    public void close() throws Exception {
        try {
            orchestrator.shutdown();
            backend.shutdown();
            store.close();
            assertThat(Files.readString(Path.of("/proc/self/mountinfo")))
                    .as("mounts left after shutdown")
                    .doesNotContain(dataDir.toString());
            try (Stream<Path> netns = Files.list(Path.of("/run/netns"))) {
                assertThat(netns.map(p -> p.getFileName().toString())
                                .filter(n -> n.startsWith("aenvs-n"))
                                .toList())
                        .as("network namespaces left after shutdown")
                        .isEmpty();
            }
        } finally {
            try {
                removeDeadRuns();
            } finally {
                lock.release();
                lockChannel.close();
            }
        }
    }

    /** Unmounts and deletes the data dirs of earlier runs; the backend's start-up reaper removes the rest. */
    private static void removeDeadRuns() throws Exception {
        List<String> mounts = Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
                .map(l -> l.split(" ")[4])
                .filter(m -> m.startsWith(TEMP.resolve(DIR_PREFIX).toString()))
                .sorted(Comparator.reverseOrder())
                .toList();
        for (String mount : mounts) {
            run("umount", mount);
        }
        try (Stream<Path> dirs = Files.list(TEMP)) {
            for (Path dir : dirs.filter(d -> d.getFileName().toString().startsWith(DIR_PREFIX))
                    .toList()) {
                run("rm", "-rf", "--one-file-system", dir.toString());
            }
        }
    }

    private static String run(String... argv) throws Exception {
        Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (process.waitFor() != 0) {
            throw new IOException(String.join(" ", argv) + " failed: " + out);
        }
        return out;
    }
}
