package io.agentenv.buildtools;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.MultiPartRequestContent;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.MultiPart;

/**
 * Records the server's JDK AOT cache (JEP 483 classes, JEP 515 method profiles): starts a local envd on a loopback port
 * and the packaged server's own {@code io.agentenv.server.Main} (its jar, the jars its manifest names, then the mock
 * backend's jar, whose sandboxes all report that envd) with {@code -XX:AOTCacheOutput}, drives what a user's SDK does
 * most (REST create, get, list, connect, pause, kill; envd calls through the sandbox proxy: process starts, unary calls,
 * files) over loopback HTTP from this JVM, then stops the server, which writes the cache as it exits.
 *
 * <p>Nothing of this class runs in the recorded JVM: its class path is the one the server runs with (the JDK uses a
 * cache only when the run's class path starts with the recorded one; {@code scripts/serve.sh}'s {@code -jar} run lacks
 * the trailing mock jar, which the JDK accepts), and the workload comes from outside, through the real HTTP path (Jetty's
 * connector, the REST handlers, the proxy and its upstream client). Run by {@code mvn package} in agentenv-server (exec
 * plugin, {@code exec:java} with this module as a plugin dependency, so it is no dependency of the server's):
 * <pre>ServerAotTraining &lt;server target dir&gt; &lt;envd dir&gt; &lt;mock backend dir&gt;</pre>
 * The cache is optional: when anything here fails it says so, removes a partial cache and returns normally, and the
 * server runs without one. A cache newer than every jar it covers is kept as it is.
 */
public final class ServerAotTraining {
    /**
     * Proxied process starts, unary calls, lifecycle rounds, and creates each followed by one proxied start and a kill
     * (time to interactive). The server runs C1 only with {@code -XX:+AOTCompileEagerly} (jvm.options): a method the
     * training compiled is compiled again at its first call in a server started with the cache, instead of running
     * interpreted until it was called a few hundred times. So every path a user's SDK takes has to be taken here
     * often enough to be compiled (C1's threshold: 200 calls): a create's code runs once per create.
     */
    private static final int EXECS = 300;

    private static final int UNARY = 300;
    private static final int LIFECYCLES = 20;
    private static final int CREATES = 250;
    private static final String KEY = "e2b_" + "aot0".repeat(10);
    private static final Duration STOP_WAIT = Duration.ofSeconds(120);

    private static final String SERVER_MAIN = "io.agentenv.server.Main";

    private ServerAotTraining() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) { // runs inside Maven's JVM (exec:java): no System.exit
            throw new IllegalArgumentException(
                    "usage: ServerAotTraining <server target dir> <envd dir> <mock backend target dir>");
        }
        Path target = Path.of(args[0]).toAbsolutePath();
        Path cache = target.resolve("agentenv-server.aot");
        try {
            if (upToDate(cache, target)) {
                System.out.println("server AOT cache is up to date: " + cache);
                return;
            }
            Files.deleteIfExists(cache);
            long started = System.nanoTime();
            record(target, Path.of(args[1]).toAbsolutePath(), Path.of(args[2]).toAbsolutePath(), cache);
            System.out.printf(
                    "server AOT cache recorded in %d ms: %s (%d bytes)%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), cache, Files.size(cache));
        } catch (Exception e) {
            Files.deleteIfExists(cache);
            System.out.println("WARNING: the server's AOT cache was not recorded (" + e
                    + "); the server runs without it, only its start-up and warm-up are slower");
        }
    }

    /** The cache is newer than the server jar, its JVM options and every jar in lib/ (what a change invalidates). */
    private static boolean upToDate(Path cache, Path target) throws IOException {
        if (!Files.isRegularFile(cache)) {
            return false;
        }
        FileTime made = Files.getLastModifiedTime(cache);
        List<Path> inputs =
                new ArrayList<>(List.of(target.resolve("agentenv-server.jar"), target.resolve("jvm.options")));
        try (Stream<Path> lib = Files.list(target.resolve("lib"))) {
            lib.forEach(inputs::add);
        }
        for (Path input : inputs) {
            if (Files.getLastModifiedTime(input).compareTo(made) >= 0) {
                return false;
            }
        }
        return true;
    }

    private static void record(Path target, Path envdDir, Path mockDir, Path cache) throws Exception {
        Path work = Files.createTempDirectory("aenv-server-aot-");
        Process envd = null;
        Process server = null;
        HttpClient http = new HttpClient();
        try {
            envd = startEnvd(envdDir, work.resolve("envd.log"));
            int envdPort = TrainingProcesses.loggedPort(envd, work.resolve("envd.log"), "envd listening port=(\\d+)");
            int port = freePort();
            server = startServer(target, jar(mockDir, "agentenv-backend-mock"), cache, work, envdPort, port);
            http.start();
            String base = "http://127.0.0.1:" + port;
            awaitReady(http, base, "server", server, work.resolve("server.log"));
            // envd answers before the first proxied request (polled directly, not through the server: a proxied 502
            // would initialise the proxy's error classes first, see Workload.run)
            awaitReady(http, "http://127.0.0.1:" + envdPort, "envd", envd, work.resolve("envd.log"));
            long ready = System.nanoTime();
            new Workload(http, base, work.resolve("upload.txt")).run();
            long trained = System.nanoTime();
            TrainingProcesses.stop(server, "server", work.resolve("server.log"), STOP_WAIT);
            System.out.printf(
                    "server AOT training: workload %d ms, cache written at exit in %d ms%n",
                    TimeUnit.NANOSECONDS.toMillis(trained - ready),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - trained));
            server = null;
            if (!Files.isRegularFile(cache)) {
                throw new IOException("the server exited without writing " + cache + ": "
                        + TrainingProcesses.tail(work.resolve("server.log")));
            }
        } finally {
            http.stop();
            if (server != null) {
                server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            if (envd != null) {
                envd.destroy();
                if (!envd.waitFor(10, TimeUnit.SECONDS)) {
                    envd.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
            deleteTree(work);
        }
    }

    /**
     * envd on a loopback TCP port, as the container backend reaches a sandbox's envd (its slot's address): the proxy's
     * and the envd client's TCP connection set-up is what every new sandbox runs once, so the training has to run it
     * (over a unix socket it trained a transport no container sandbox uses, and left the TCP one interpreted).
     */
    private static Process startEnvd(Path envdDir, Path log) throws IOException {
        List<String> command = new ArrayList<>(List.of(TrainingProcesses.java()));
        Path options = envdDir.resolve("jvm.options");
        if (Files.isRegularFile(options)) {
            command.add("@" + options);
        }
        if (Files.isRegularFile(envdDir.resolve("envd.aot"))) {
            command.add("-XX:AOTCache=" + envdDir.resolve("envd.aot"));
            command.add("-Xlog:aot=error,cds=error");
        }
        // a port envd picks itself (a probed free port can be taken by another process before envd binds it)
        command.addAll(List.of(
                "-jar",
                jar(envdDir, "agentenv-envd").toString(),
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--log-level",
                "INFO"));
        return new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
    }

    private static Process startServer(Path target, Path mockJar, Path cache, Path work, int envdPort, int port)
            throws IOException {
        List<String> command = new ArrayList<>(List.of(TrainingProcesses.java()));
        // the options the server runs with (serve.sh: @target/jvm.options): a JVM started with others ignores the cache
        command.add("@" + target.resolve("jvm.options"));
        command.addAll(List.of(
                "-XX:AOTCacheOutput=" + cache,
                "-Xlog:aot=error,cds=error",
                "-cp",
                target.resolve("agentenv-server.jar") + ":" + mockJar,
                SERVER_MAIN));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(work.resolve("server.log").toFile());
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(k -> k.startsWith("AENV_"));
        env.putAll(Map.of(
                "AENV_BACKEND",
                "mock",
                "AENV_HOME",
                work.resolve("home").toString(),
                "AENV_API_KEY",
                KEY,
                "AENV_LISTEN",
                "127.0.0.1:" + port,
                "AENV_BACKEND_GUEST_ENDPOINT",
                "127.0.0.1:" + envdPort));
        return builder.start();
    }

    /** Polls {@code base}/health until it answers 204 (a busy build machine may take seconds to start a JVM). */
    private static void awaitReady(HttpClient http, String base, String what, Process process, Path log)
            throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            if (!process.isAlive()) {
                throw new IOException("the " + what + " exited at start-up: " + TrainingProcesses.tail(log));
            }
            try {
                if (http.newRequest(base + "/health")
                                .timeout(5, TimeUnit.SECONDS)
                                .send()
                                .getStatus()
                        == 204) {
                    return;
                }
            } catch (java.util.concurrent.ExecutionException e) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("the " + what + " was not ready within 60 s: " + TrainingProcesses.tail(log));
            }
            Thread.sleep(50); // start-up poll, not a test
        }
    }

    /** What an SDK user does, through the REST API and the sandbox proxy (headers routing, as the e2b SDK). */
    private record Workload(HttpClient http, String base, Path file) {
        private static final Pattern ID = Pattern.compile("\"sandboxID\"\\s*:\\s*\"([^\"]+)\"");
        private static final Pattern TOKEN = Pattern.compile("\"envdAccessToken\"\\s*:\\s*\"([^\"]+)\"");

        void run() throws Exception {
            String[] sandbox = create();
            for (int i = 0; i < EXECS; i++) {
                expect(
                        envd(
                                sandbox,
                                HttpMethod.POST,
                                "/process.Process/Start",
                                "application/connect+json",
                                envelope("{\"process\":{\"cmd\":\"/bin/true\",\"args\":[]},\"stdin\":false}")),
                        200);
                if (i % 50 == 0) {
                    expect(envd(sandbox, HttpMethod.GET, "/health", null, null), 204);
                    expect(upload(sandbox, "line " + i + "\n"), 200);
                    expect(envd(sandbox, HttpMethod.GET, "/files?path=" + file, null, null), 200);
                }
            }
            for (int i = 0; i < UNARY; i++) {
                expect(
                        envd(
                                sandbox,
                                HttpMethod.POST,
                                "/process.Process/List",
                                "application/json",
                                "{}".getBytes(UTF_8)),
                        200);
            }
            expect(api(HttpMethod.DELETE, "/sandboxes/" + sandbox[0], null), 204);
            for (int i = 0; i < CREATES; i++) {
                String[] one = create();
                expect(
                        envd(
                                one,
                                HttpMethod.POST,
                                "/process.Process/Start",
                                "application/connect+json",
                                envelope("{\"process\":{\"cmd\":\"/bin/true\",\"args\":[]},\"stdin\":false}")),
                        200);
                expect(api(HttpMethod.DELETE, "/sandboxes/" + one[0], null), 204);
            }
            // Last: what initialises error and pause classes (the 502 of a killed sandbox, pause events). A method
            // compiled
            // after such a class was initialised records it as a dependency, and -XX:+AOTCompileEagerly compiles it in
            // a
            // served JVM only once every dependency is initialised there: had these run first, the create path's
            // methods
            // (ApiHandler.handle, OperationRunner.mutate, the proxy's route) would wait for the server's first error.
            for (int i = 0; i < LIFECYCLES; i++) {
                String[] one = create();
                expect(api(HttpMethod.GET, "/sandboxes/" + one[0], null), 200);
                expect(api(HttpMethod.GET, "/v2/sandboxes?limit=10", null), 200);
                expect(
                        envd(
                                one,
                                HttpMethod.POST,
                                "/process.Process/Start",
                                "application/connect+json",
                                envelope("{\"process\":{\"cmd\":\"/bin/true\",\"args\":[]},\"stdin\":false}")),
                        200);
                expect(api(HttpMethod.POST, "/sandboxes/" + one[0] + "/timeout", "{\"timeout\":120}"), 204);
                expect(api(HttpMethod.POST, "/sandboxes/" + one[0] + "/pause", "{}"), 204);
                expect(api(HttpMethod.POST, "/sandboxes/" + one[0] + "/connect", "{\"timeout\":60}"), 201);
                expect(api(HttpMethod.DELETE, "/sandboxes/" + one[0], null), 204);
                expect(envd(one, HttpMethod.GET, "/health", null, null), 502);
            }
        }

        private String[] create() throws Exception {
            ContentResponse created = expect(
                    api(HttpMethod.POST, "/v2/sandboxes", "{\"templateID\":\"base\",\"timeout\":300,\"secure\":true}"),
                    201);
            String body = created.getContentAsString();
            return new String[] {group(ID, body), group(TOKEN, body)};
        }

        private ContentResponse api(HttpMethod method, String path, String json) throws Exception {
            Request request = http.newRequest(base + path)
                    .method(method)
                    .timeout(30, TimeUnit.SECONDS)
                    .headers(h -> h.put("X-API-Key", KEY));
            if (json != null) {
                request.body(new StringRequestContent("application/json", json));
            }
            return request.send();
        }

        private ContentResponse envd(String[] sandbox, HttpMethod method, String path, String contentType, byte[] body)
                throws Exception {
            Request request = http.newRequest(base + path)
                    .method(method)
                    .timeout(30, TimeUnit.SECONDS)
                    .headers(h -> h.put("E2b-Sandbox-Id", sandbox[0])
                            .put("E2b-Sandbox-Port", "49983")
                            .put("X-Access-Token", sandbox[1])
                            .put("Connect-Protocol-Version", "1"));
            // No User-Agent of its own: the server has no path that depends on it (the proxy copies whatever the
            // caller sent, UpstreamForwarder, and adds none); Jetty's client sends its default one, so the copy of a
            // User-Agent header, which every SDK request carries, is trained as it runs.
            if (body != null) {
                request.body(new BytesRequestContent(contentType, body));
            }
            return request.send();
        }

        /** A file upload as the SDK sends it (multipart form, field "file"). */
        private ContentResponse upload(String[] sandbox, String text) throws Exception {
            MultiPartRequestContent form = new MultiPartRequestContent();
            form.addPart(new MultiPart.ContentSourcePart(
                    "file",
                    file.getFileName().toString(),
                    HttpFields.EMPTY,
                    new StringRequestContent("application/octet-stream", text)));
            form.close();
            return http.newRequest(base + "/files?path=" + file)
                    .method(HttpMethod.POST)
                    .timeout(30, TimeUnit.SECONDS)
                    .headers(h -> h.put("E2b-Sandbox-Id", sandbox[0])
                            .put("E2b-Sandbox-Port", "49983")
                            .put("X-Access-Token", sandbox[1]))
                    .body(form)
                    .send();
        }

        private static ContentResponse expect(ContentResponse response, int status) throws IOException {
            if (response.getStatus() != status) {
                throw new IOException(
                        "expected " + status + ", got " + response.getStatus() + ": " + response.getContentAsString());
            }
            return response;
        }

        private static String group(Pattern pattern, String body) throws IOException {
            Matcher m = pattern.matcher(body);
            if (!m.find()) {
                throw new IOException("unexpected create answer: " + body);
            }
            return m.group(1);
        }

        private static byte[] envelope(String json) {
            byte[] payload = json.getBytes(UTF_8);
            return ByteBuffer.allocate(5 + payload.length)
                    .put((byte) 0)
                    .putInt(payload.length)
                    .put(payload)
                    .array();
        }
    }

    private static Path jar(Path dir, String module) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            Optional<Path> jar = files.filter(f -> {
                        String name = f.getFileName().toString();
                        return name.startsWith(module)
                                && name.endsWith(".jar")
                                && !name.matches(".*-(sources|tests|javadoc)\\.jar");
                    })
                    .findFirst();
            return jar.orElseThrow(() -> new IOException(module + " jar missing under " + dir));
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket probe = new ServerSocket(0)) {
            return probe.getLocalPort();
        }
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> all = Files.walk(root)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            System.out.println("WARNING: could not remove " + root + ": " + e.getMessage());
        }
    }
}
