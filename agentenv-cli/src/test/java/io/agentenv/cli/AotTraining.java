package io.agentenv.cli;

import static io.agentenv.cli.FakeSandboxServer.ID;

import io.agentenv.envd.protocol.connect.EndStream;
import io.agentenv.envd.protocol.filesystem.EntryInfo;
import io.agentenv.envd.protocol.filesystem.FileType;
import io.agentenv.envd.protocol.filesystem.ListDirResponse;
import io.agentenv.envd.protocol.filesystem.MakeDirResponse;
import io.agentenv.envd.protocol.filesystem.RemoveResponse;
import io.agentenv.envd.protocol.filesystem.StatResponse;
import io.agentenv.envd.protocol.process.CloseStdinResponse;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import picocli.CommandLine;

/**
 * Build-time only (test scope, never in aenv.jar): the training run of aenv's JDK AOT cache (JEP 483 classes, JEP 515
 * profiles). {@code mvn package} runs it in a JVM started with agentenv-cli/jvm.options and
 * {@code -XX:AOTCacheOutput=target/aenv.aot}, with aenv.jar first on the class path (a JVM that runs {@code -jar aenv.jar}
 * accepts the cache) and this module's test jar after it. It runs aenv's commands in-process, as {@code main} would,
 * against {@link FakeSandboxServer} on a loopback port: help and parsing of every command, the control-plane calls, and
 * exec and files through the proxied envd. No server, no network. The JVM writes the cache when this exits.
 * <pre>java @jvm.options -XX:AOTCacheOutput=target/aenv.aot -cp target/aenv.jar:target/agentenv-cli-*-tests.jar
 *     io.agentenv.cli.AotTraining target/aenv.aot</pre>
 * A failure is reported and ends this with 0: the cache is optional, the launcher runs without it.
 */
final class AotTraining {
    /** Rounds of the whole workload: enough for the methods every command runs to be profiled. */
    private static final int ROUNDS = 2;

    private AotTraining() {}

    public static void main(String[] args) throws Exception {
        long started = System.nanoTime();
        Path work = Files.createTempDirectory("aenv-aot-");
        try (FakeSandboxServer server = new FakeSandboxServer()) {
            answer(server);
            Workload workload = new Workload(server, work);
            for (int i = 0; i < ROUNDS; i++) {
                workload.run();
            }
            System.out.printf(
                    "aenv AOT training: %d commands in %d ms%n",
                    workload.commands, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        } catch (Exception | AssertionError e) {
            System.out.println("WARNING: aenv's AOT training failed (" + e + "); the cache may be missing or partial,"
                    + " bin/aenv then runs without it, only its start-up is slower");
        } finally {
            try (Stream<Path> files = Files.walk(work)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static void answer(FakeSandboxServer server) throws IOException {
        String sandbox = """
                {"templateID":"base","sandboxID":"%s","clientID":"","envdVersion":"0.6.13","envdAccessToken":"%s",
                 "trafficAccessToken":null,"domain":null}""".formatted(ID, FakeSandboxServer.TOKEN);
        String listed = """
                {"templateID":"base","alias":"base","sandboxID":"%s","clientID":"","startedAt":"2026-01-01T00:00:00Z",
                 "endAt":"2026-01-01T00:05:00Z","cpuCount":2,"memoryMB":512,"diskSizeMB":1024,"metadata":{"a":"b"},
                 "state":"running","envdVersion":"0.6.13"}""".formatted(ID);
        String snapshot = """
                {"snapshotID":"snap1","names":["s"],"createdAt":"2026-01-01T00:00:00Z","cpuCount":2,"memoryMB":512,
                 "diskSizeMB":1024}""";
        server.api("POST /v2/sandboxes", 201, sandbox);
        server.api("GET /v2/sandboxes", 200, "[" + listed + "," + listed + "]");
        server.api("DELETE /sandboxes/" + ID, 204, "");
        server.api("POST /sandboxes/" + ID + "/pause", 204, "");
        server.api("POST /v2/sandboxes/" + ID + "/connect", 200, sandbox);
        server.api("POST /sandboxes/" + ID + "/timeout", 204, "");
        server.api("POST /sandboxes/" + ID + "/fork", 201, "[{\"sandbox\":" + sandbox + ",\"error\":null}]");
        server.api("POST /sandboxes/" + ID + "/snapshots", 201, snapshot);
        server.api("GET /snapshots", 200, "[" + snapshot + "]");
        server.api("GET /templates", 200, """
                [{"templateID":"base","aliases":["base"],"cpuCount":2,"memoryMB":512,"diskSizeMB":1024,"createdAt":"2026-01-01T00:00:00Z"}]""");
        server.api("GET /v2/sandboxes/" + ID + "/logs", 200, """
                {"logs":[{"timestamp":"2026-01-01T00:00:01Z","level":"info","message":"hello\\n",
                          "fields":{"source":"process","pid":"12","stream":"stdout"}}]}""");
        server.api("GET /sandboxes/" + ID + "/metrics", 200, """
                [{"timestamp":"2026-01-01T00:00:05Z","timestampUnix":1767225605,"cpuCount":2,"cpuUsedPct":12.5,
                  "memUsed":104857600,"memTotal":536870912,"memCache":0,"diskUsed":1048576,"diskTotal":1073741824}]""");
        server.api("PUT /sandboxes/" + ID + "/network", 204, "");
        new FakeVolumes(server);
        server.envd("/process.Process/Start", (request, ex) -> {
            OutputStream out = FakeSandboxServer.openStream(ex);
            FakeSandboxServer.event(out, FakeSandboxServer.start(42));
            FakeSandboxServer.event(out, FakeSandboxServer.stdout("hello\n"));
            FakeSandboxServer.event(out, FakeSandboxServer.stderr("warning\n"));
            FakeSandboxServer.event(out, FakeSandboxServer.exited(0));
            FakeSandboxServer.endStream(out, EndStream.ok());
        });
        server.envd(
                "/filesystem.Filesystem/ListDir",
                (request, ex) -> FakeSandboxServer.unary(
                        ex,
                        ListDirResponse.newBuilder()
                                .addEntries(EntryInfo.newBuilder()
                                        .setName("a.txt")
                                        .setPath("/tmp/a.txt")
                                        .setType(FileType.FILE_TYPE_FILE)
                                        .setSize(3)
                                        .setPermissions("-rw-r--r--")
                                        .setOwner("user")
                                        .setGroup("user"))
                                .addEntries(EntryInfo.newBuilder()
                                        .setName("d")
                                        .setPath("/tmp/d")
                                        .setType(FileType.FILE_TYPE_DIRECTORY)
                                        .setPermissions("drwxr-xr-x")
                                        .setOwner("user")
                                        .setGroup("user"))
                                .build()));
        server.envd(
                "/filesystem.Filesystem/Stat",
                (request, ex) -> FakeSandboxServer.unary(
                        ex,
                        StatResponse.newBuilder()
                                .setEntry(EntryInfo.newBuilder()
                                        .setName("tmp")
                                        .setPath("/tmp")
                                        .setType(FileType.FILE_TYPE_DIRECTORY))
                                .build()));
        server.envd(
                "/filesystem.Filesystem/MakeDir",
                (request, ex) -> FakeSandboxServer.unary(ex, MakeDirResponse.getDefaultInstance()));
        server.envd(
                "/process.Process/CloseStdin",
                (request, ex) -> FakeSandboxServer.unary(ex, CloseStdinResponse.getDefaultInstance()));
        server.envd(
                "/filesystem.Filesystem/Remove",
                (request, ex) -> FakeSandboxServer.unary(ex, RemoveResponse.getDefaultInstance()));
        byte[] content = "hello, sandbox\n".repeat(1000).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        server.envd("/files", (request, ex) -> {
            if (request.method().equals("POST")) {
                FakeSandboxServer.json(ex, 200, "[{\"path\":\"/tmp/x\",\"name\":\"x\",\"type\":\"file\"}]");
            } else {
                ex.sendResponseHeaders(200, content.length);
                ex.getResponseBody().write(content);
            }
        });
    }

    /** aenv's command lines, each run as main runs one, with the output thrown away. */
    private static final class Workload {
        private final FakeSandboxServer server;
        private final Path work;
        int commands;

        Workload(FakeSandboxServer server, Path work) {
            this.server = server;
            this.work = work;
        }

        void run() throws IOException {
            Path local = work.resolve("local.txt");
            Files.writeString(local, "training\n");
            Path tree = work.resolve("tree");
            Files.createDirectories(tree.resolve("sub"));
            Files.writeString(tree.resolve("sub").resolve("b.txt"), "b\n");
            aenv("--help");
            aenv("--version");
            aenv("no-such-command"); // a usage error
            for (String command : commandNames()) {
                aenv(command, "--help");
            }
            aenv("files", "get", "--help");
            aenv("list");
            aenv("list", "-o", "json");
            aenv("ls", "--state", "running", "--metadata", "a=b");
            aenv("create");
            aenv("create", "base", "--timeout", "60", "--metadata", "k=v", "--env", "A=B", "--on-timeout", "pause");
            aenv("info", ID);
            aenv("info", ID, "-o", "json");
            aenv("info", "zzzzzzzzzzzzzzzzzzzz"); // not found: one error line
            aenv("kill", ID);
            aenv("pause", ID);
            aenv("connect", ID, "--timeout", "60");
            aenv("set-timeout", ID, "60");
            aenv("fork", ID);
            aenv("snapshot", ID, "--name", "s");
            aenv("snapshots");
            aenv("templates");
            aenv("logs", ID);
            aenv("metrics", ID);
            aenv("network", ID, "--deny-out", "0.0.0.0/0", "--allow-out", "10.0.0.0/8");
            aenv("exec", ID, "--", "echo", "hello world");
            aenv("exec", ID, "-c", "echo hello | cat");
            aenv("files", "ls", ID, "/tmp");
            aenv("files", "get", ID, "/tmp/x");
            aenv("files", "get", ID, "/tmp/x", work.resolve("got.txt").toString());
            aenv("files", "put", ID, local.toString(), "/tmp/x");
            aenv("files", "rm", ID, "/tmp/x");
            aenv("files", "put", "-r", ID, tree.toString(), "/tmp/tree");
            aenv("files", "get", "-r", ID, "/tmp", work.resolve("got").toString());
            aenv("volume", "create", FakeVolumes.NAME);
            aenv("volume", "create", FakeVolumes.NAME, "--size", "64", "-o", "json");
            aenv("volume", "ls");
            aenv("volume", "info", FakeVolumes.NAME);
            aenv("volume", "put", FakeVolumes.NAME, local.toString(), "/README.md");
            aenv("volume", "get", FakeVolumes.NAME, "/README.md");
            aenv(
                    "volume",
                    "get",
                    FakeVolumes.NAME,
                    "/README.md",
                    work.resolve("vol.txt").toString());
            aenv("volume", "ls", FakeVolumes.NAME, "/", "--depth", "2");
            aenv("volume", "rm", FakeVolumes.NAME);
            aenv("create", "base", "--volume", "data:/data");
            aenv("create", "base", "--volume", "data"); // a usage error
            aenv("completion", "bash");
            aenv("auth", "status");
            aenv(false, "start", "base");
            Files.setLastModifiedTime(local, FileTime.fromMillis(System.currentTimeMillis()));
        }

        private List<String> commandNames() {
            CommandLine cli = new CommandLine(new Aenv(Map.of(), stdio(), hook -> {}));
            return new ArrayList<>(cli.getSubcommands().keySet());
        }

        private void aenv(String... args) {
            aenv(true, args);
        }

        /** One command line, stdin a terminal or an empty pipe; the user's config is looked for under the work dir. */
        private void aenv(boolean terminal, String... args) {
            Map<String, String> env = Map.of(
                    "AENV_API_URL",
                    server.url(),
                    "AENV_API_KEY",
                    FakeSandboxServer.KEY,
                    "XDG_CONFIG_HOME",
                    work.resolve("config").toString());
            Aenv.run(args, env, stdio(terminal), hook -> {});
            commands++;
        }

        private static Stdio stdio() {
            return stdio(true);
        }

        private static Stdio stdio(boolean terminal) {
            InputStream in = new ByteArrayInputStream(new byte[0]);
            return new Stdio(in, OutputStream.nullOutputStream(), OutputStream.nullOutputStream(), terminal);
        }
    }
}
