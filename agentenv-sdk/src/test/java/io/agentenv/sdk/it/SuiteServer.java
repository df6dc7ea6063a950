package io.agentenv.sdk.it;

import static org.assertj.core.api.Assertions.fail;

import io.agentenv.sdk.SandboxConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The real server for the integration suite: {@code java -jar agentenv-server/target/agentenv-server.jar} as a
 * separate process with the container backend on this suite's own lane (netns/veth prefix {@code aenvj}, runc state
 * under {@code /run/agentenv/e2e-java-sdk}, cgroup parent {@code agentenv-e2e-java-sdk}, network slots from 13824,
 * container ids {@code jsdk-}), a fresh data dir and API key, started once before the suite's tests and stopped after
 * them, when it asserts that the server left no mount, loop device or network namespace of its lane behind.
 *
 * <p>Needs root and a host prepared by {@code scripts/setup-host.sh}: otherwise the suite is skipped with the reason,
 * or failed when {@code AENV_REQUIRE_HOST_TESTS=1} (as {@code scripts/test.sh} sets it as root). Two runs of the
 * suite on one host take turns (a lock file in the run dir).
 */
public final class SuiteServer implements ExecutionCondition, BeforeAllCallback, AfterAllCallback {
    static final String API_KEY = "e2b_" + "0123456789abcdef".repeat(3).substring(0, 40);
    static final String NAME_PREFIX = "aenvj";
    static final Path RUN_DIR = Path.of("/run/agentenv/e2e-java-sdk");
    static final String CGROUP_PARENT = "agentenv-e2e-java-sdk";
    static final int FIRST_SLOT = 13824;
    static final String ID_PREFIX = "jsdk-";
    static final int MAX_SANDBOXES = 4;
    private static final Path TEMP = Path.of("/var/tmp");
    private static final String DIR_PREFIX = "aenv-jsdk-";
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(120);

    private static SandboxConfig config;

    private Process process;
    private Path dataDir;
    private Path log;
    private FileChannel lockChannel;
    private FileLock lock;

    /** The SDK configuration pointing at the running server (API and sandbox URL alike). */
    static SandboxConfig config() {
        if (config == null) {
            throw new IllegalStateException("the suite server is not running");
        }
        return config;
    }

    /** Whether the server runs (false when its start failed). */
    static boolean running() {
        return config != null;
    }

    /** Skips the suite (reported as skipped) where the host cannot run it, unless host tests are required. */
    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        String unready;
        try {
            unready = unreadyReason();
        } catch (IOException e) {
            unready = "the host could not be checked: " + e.getMessage();
        }
        if (unready == null || "1".equals(System.getenv("AENV_REQUIRE_HOST_TESTS"))) {
            return ConditionEvaluationResult.enabled("the host can run container sandboxes (or they are required)");
        }
        return ConditionEvaluationResult.disabled("host test skipped: " + unready);
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        if (context.getTestClass().map(c -> c.getEnclosingClass() != null).orElse(false)) {
            return; // nested classes share the outer class's server
        }
        String unready = unreadyReason();
        if (unready != null) {
            if ("1".equals(System.getenv("AENV_REQUIRE_HOST_TESTS"))) {
                fail("host tests are required but " + unready);
            }
            Assumptions.abort("host test skipped: " + unready);
        }
        Files.createDirectories(RUN_DIR);
        lockChannel =
                FileChannel.open(RUN_DIR.resolve("suite.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        lock = lockChannel.lock();
        removeDeadRuns();
        dataDir = Files.createTempDirectory(TEMP, DIR_PREFIX);
        log = Path.of("target", "sdk-it-server.log").toAbsolutePath();
        Files.createDirectories(log.getParent());
        int port = freePort();
        ProcessBuilder pb = new ProcessBuilder(
                javaBinary(),
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Xmx256m",
                "--enable-native-access=ALL-UNNAMED",
                "-jar",
                serverJar().toString());
        Map<String, String> env = pb.environment();
        env.keySet().removeIf(k -> k.startsWith("AENV_") || k.startsWith("E2B_"));
        env.putAll(Map.ofEntries(
                Map.entry("AENV_BACKEND", "container"),
                Map.entry("AENV_HOME", dataDir.toString()),
                Map.entry("AENV_API_KEY", API_KEY),
                Map.entry("AENV_LISTEN", "127.0.0.1:" + port),
                Map.entry("AENV_BACKEND_NAME_PREFIX", NAME_PREFIX),
                Map.entry("AENV_BACKEND_RUN_DIR", RUN_DIR.toString()),
                Map.entry("AENV_BACKEND_CGROUP_PARENT", CGROUP_PARENT),
                Map.entry("AENV_BACKEND_FIRST_SLOT", Integer.toString(FIRST_SLOT)),
                Map.entry("AENV_BACKEND_ID_PREFIX", ID_PREFIX),
                Map.entry("AENV_BACKEND_ENVD_DIR", envdDir().toString()),
                Map.entry("AENV_BACKEND_POOL_SIZE", "0"),
                Map.entry("AENV_METRICS_SAMPLE_INTERVAL_MS", "500"),
                Map.entry("AENV_BACKEND_MAX_SANDBOXES", Integer.toString(MAX_SANDBOXES)),
                Map.entry("AENV_BACKEND_MEMORY_MB", "512"),
                Map.entry("AENV_BACKEND_DISK_MB", "1024"),
                Map.entry("AENV_BACKEND_SPARE_DISKS", "1")));
        pb.redirectErrorStream(true).redirectOutput(log.toFile());
        process = pb.start();
        String url = "http://127.0.0.1:" + port;
        awaitReady(url);
        config = SandboxConfig.builder(Map.of())
                .apiKey(API_KEY)
                .apiUrl(url)
                .sandboxUrl(url)
                .build();
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (context.getTestClass().map(c -> c.getEnclosingClass() != null).orElse(false) || process == null) {
            return;
        }
        config = null;
        try {
            process.destroy(); // SIGTERM: the server pauses what still runs and shuts its backend down
            if (!process.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
                fail("the server did not stop within " + STOP_TIMEOUT + "; its output: " + log);
            }
            int code = process.exitValue();
            if (code != 0 && code != 143) {
                fail("the server exited with " + code + "; its output: " + log);
            }
            List<String> left = leftovers();
            Instant deadline = Instant.now().plusSeconds(10);
            while (!left.isEmpty() && Instant.now().isBefore(deadline)) {
                Thread.sleep(100);
                left = leftovers();
            }
            if (!left.isEmpty()) {
                fail("the stopped server left host resources behind (data dir " + dataDir + " kept): " + left);
            }
            deleteTree(dataDir);
        } finally {
            lock.release();
            lockChannel.close();
        }
    }

    private void awaitReady(String url) throws Exception {
        HttpClient http =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        Instant deadline = Instant.now().plus(READY_TIMEOUT);
        while (true) {
            if (!process.isAlive()) {
                fail("the server exited before it was ready (" + process.exitValue() + "):\n" + tail());
            }
            try {
                HttpResponse<Void> r = http.send(
                        HttpRequest.newBuilder(URI.create(url + "/health"))
                                .timeout(Duration.ofSeconds(2))
                                .GET()
                                .build(),
                        HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() == 204) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            if (Instant.now().isAfter(deadline)) {
                process.destroyForcibly().waitFor();
                fail("the server was not ready after " + READY_TIMEOUT + ":\n" + tail());
            }
            Thread.sleep(50);
        }
    }

    private String tail() throws IOException {
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }

    /** Mounts under the data dir and runc's state root, loop devices backed by the data dir, netns of the lane. */
    private List<String> leftovers() throws IOException {
        List<String> left = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
            String[] fields = line.split(" ");
            if (fields.length > 4) {
                String point = unescape(fields[4]);
                if (under(point, dataDir) || under(point, RUN_DIR.resolve("runc"))) {
                    left.add("mount " + point);
                }
            }
        }
        try (Stream<Path> devices = Files.list(Path.of("/sys/block"))) {
            for (Path device : devices.filter(d -> d.getFileName().toString().matches("loop[0-9]+"))
                    .toList()) {
                Path backing = device.resolve("loop/backing_file");
                if (Files.isReadable(backing)) {
                    String file = Files.readString(backing).strip();
                    if (under(file, dataDir)) {
                        left.add("loop " + device.getFileName() + " -> " + file);
                    }
                }
            }
        }
        Path netns = Path.of("/run/netns");
        if (Files.isDirectory(netns)) {
            try (Stream<Path> names = Files.list(netns)) {
                names.map(p -> p.getFileName().toString())
                        .filter(n -> n.startsWith(NAME_PREFIX + "-n"))
                        .forEach(n -> left.add("netns " + n));
            }
        }
        return left;
    }

    private static boolean under(String path, Path dir) {
        String d = dir.toString();
        return path.equals(d) || path.startsWith(d.endsWith("/") ? d : d + "/");
    }

    private static String unescape(String field) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\'
                    && i + 3 < field.length()
                    && field.substring(i + 1, i + 4).matches("[0-7]{3}")) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** Data dirs of earlier runs that died: removed unless something is still mounted in them. */
    private static void removeDeadRuns() throws IOException {
        List<String> mounts = Files.readAllLines(Path.of("/proc/self/mountinfo"));
        try (Stream<Path> dirs = Files.list(TEMP)) {
            for (Path old : dirs.filter(d -> d.getFileName().toString().startsWith(DIR_PREFIX))
                    .toList()) {
                boolean mounted = mounts.stream()
                        .map(l -> l.split(" "))
                        .filter(f -> f.length > 4)
                        .anyMatch(f -> under(unescape(f[4]), old));
                if (!mounted) {
                    deleteTree(old);
                }
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
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
        if (!Files.isRegularFile(Path.of("/run/agentenv/lxcfs/proc/meminfo"))) { // the server refuses to start
            return "LXCFS does not answer at /run/agentenv/lxcfs (scripts/setup-host.sh starts it)";
        }
        if (!Files.isRegularFile(serverJar())) {
            return "the server jar is missing: " + serverJar() + " (mvn package -pl agentenv-server,agentenv-envd -am)";
        }
        if (!Files.isRegularFile(envdDir().resolve("agentenv-envd.jar"))) {
            return "the envd jar is missing under " + envdDir();
        }
        return null;
    }

    private static Path serverJar() {
        return Path.of(System.getProperty("sdk.it.serverJar", "../agentenv-server/target/agentenv-server.jar"))
                .toAbsolutePath()
                .normalize();
    }

    private static Path envdDir() {
        return Path.of(System.getProperty("sdk.it.envdDir", "../agentenv-envd/target"))
                .toAbsolutePath()
                .normalize();
    }

    /** The server needs Java 25: the build's JDK (set by the pom), else JAVA_HOME's, else the JVM running the tests. */
    private static String javaBinary() {
        String configured = System.getProperty("sdk.it.serverJava");
        if (configured != null && Files.isExecutable(Path.of(configured))) {
            return configured;
        }
        String home = System.getenv("JAVA_HOME");
        if (home == null || !Files.isExecutable(Path.of(home, "bin", "java"))) {
            home = System.getProperty("java.home");
        }
        return Path.of(home, "bin", "java").toString();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return socket.getLocalPort();
        }
    }
}
