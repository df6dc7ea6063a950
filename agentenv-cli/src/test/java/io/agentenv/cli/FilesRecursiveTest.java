package io.agentenv.cli;

import static io.agentenv.cli.FakeSandboxServer.ID;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.envd.protocol.filesystem.EntryInfo;
import io.agentenv.envd.protocol.filesystem.FileType;
import io.agentenv.envd.protocol.filesystem.ListDirRequest;
import io.agentenv.envd.protocol.filesystem.ListDirResponse;
import io.agentenv.envd.protocol.filesystem.MakeDirRequest;
import io.agentenv.envd.protocol.filesystem.MakeDirResponse;
import io.agentenv.envd.protocol.filesystem.StatRequest;
import io.agentenv.envd.protocol.filesystem.StatResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** aenv files put -r and get -r against the fake server's envd, and the progress bar they draw on a terminal. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class FilesRecursiveTest {
    private FakeSandboxServer server;
    /** The fake sandbox's files: path to content. */
    private final Map<String, byte[]> sandboxFiles = new ConcurrentHashMap<>();

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeEach
    void start() throws IOException {
        server = new FakeSandboxServer();
        server.envd("/files", (request, ex) -> {
            String path = URLDecoder.decode(
                    request.uri().replaceFirst("^/files\\?path=", "").replaceFirst("&.*", ""), StandardCharsets.UTF_8);
            if (request.method().equals("POST")) {
                sandboxFiles.put(path, request.body());
                FakeSandboxServer.json(ex, 200, "[{\"path\":\"" + path + "\",\"name\":\"x\",\"type\":\"file\"}]");
            } else if (sandboxFiles.containsKey(path)) {
                byte[] content = sandboxFiles.get(path);
                ex.sendResponseHeaders(200, content.length);
                ex.getResponseBody().write(content);
            } else {
                FakeSandboxServer.json(ex, 404, "{\"code\":404,\"message\":\"path '" + path + "' does not exist\"}");
            }
        });
    }

    @AfterEach
    void stop() {
        server.close();
    }

    /** aenv with stderr a terminal or not. */
    private int aenv(boolean errIsTerminal, String... args) {
        Map<String, String> env = Map.of("AENV_API_URL", server.url(), "AENV_API_KEY", FakeSandboxServer.KEY);
        Stdio stdio = new Stdio(
                InputStream.nullInputStream(),
                out,
                err,
                true,
                new Stdio(InputStream.nullInputStream(), out, err, true).terminal(),
                errIsTerminal);
        return Aenv.run(args, env, stdio, hook -> {});
    }

    private String stderr() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void put_r_uploads_every_file_of_the_tree_makes_empty_directories_and_skips_links(@TempDir Path dir)
            throws IOException {
        byte[] big = new byte[5 << 20];
        new Random(1).nextBytes(big);
        Files.createDirectories(dir.resolve("sub/deeper"));
        Files.createDirectories(dir.resolve("empty"));
        Files.writeString(dir.resolve("a.txt"), "a\n");
        Files.write(dir.resolve("sub/deeper/big.bin"), big);
        Files.createSymbolicLink(dir.resolve("link"), Path.of("/etc/passwd"));
        server.envd(
                "/filesystem.Filesystem/MakeDir",
                (request, ex) -> FakeSandboxServer.unary(ex, MakeDirResponse.getDefaultInstance()));

        assertThat(aenv(false, "files", "put", "-r", ID, dir.toString(), "/home/user/up/"))
                .as(stderr())
                .isZero();

        assertThat(sandboxFiles.keySet())
                .containsExactlyInAnyOrder("/home/user/up/a.txt", "/home/user/up/sub/deeper/big.bin");
        assertThat(sandboxFiles.get("/home/user/up/sub/deeper/big.bin")).isEqualTo(big);
        assertThat(server.envdRequests("/files"))
                .allSatisfy(r -> assertThat(r.header("Content-Length")).isNotNull());
        MakeDirRequest made = FakeSandboxServer.unaryRequest(
                server.envdRequests("/filesystem.Filesystem/MakeDir").getFirst(), MakeDirRequest.getDefaultInstance());
        assertThat(made.getPath()).isEqualTo("/home/user/up/empty");
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("wrote 2 files (5.0 MiB) to /home/user/up/\n");
        assertThat(stderr()).isEqualTo("aenv: skipped symbolic link " + dir.resolve("link") + "\n");
    }

    @Test
    void get_r_downloads_the_tree_into_the_local_directory(@TempDir Path dir) throws IOException {
        sandboxFiles.put("/home/user/data/a.txt", "a\n".getBytes(StandardCharsets.UTF_8));
        sandboxFiles.put("/home/user/data/sub/b.txt", "b\n".getBytes(StandardCharsets.UTF_8));
        listing(
                "/home/user/data",
                entry("/home/user/data/a.txt", FileType.FILE_TYPE_FILE, 2),
                entry("/home/user/data/empty", FileType.FILE_TYPE_DIRECTORY, 0),
                entry("/home/user/data/l", FileType.FILE_TYPE_SYMLINK, 0),
                entry("/home/user/data/sub", FileType.FILE_TYPE_DIRECTORY, 0),
                entry("/home/user/data/sub/b.txt", FileType.FILE_TYPE_FILE, 2));
        Path into = dir.resolve("copy");

        assertThat(aenv(false, "files", "get", "-r", ID, "data", into.toString()))
                .as(stderr())
                .isZero();

        assertThat(tree(into)).isEqualTo("a.txt=a\n|empty/|sub/|sub/b.txt=b\n");
        StatRequest stat = FakeSandboxServer.unaryRequest(
                server.envdRequests("/filesystem.Filesystem/Stat").getFirst(), StatRequest.getDefaultInstance());
        assertThat(stat.getPath()).isEqualTo("data");
        ListDirRequest ls = FakeSandboxServer.unaryRequest(
                server.envdRequests("/filesystem.Filesystem/ListDir").getFirst(), ListDirRequest.getDefaultInstance());
        assertThat(ls.getPath()).isEqualTo("/home/user/data");
        assertThat(ls.getDepth()).isGreaterThan(1000);
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("got 2 files (4 B) into " + into + "\n");
        assertThat(stderr()).isEqualTo("aenv: skipped symbolic link /home/user/data/l\n");
    }

    @Test
    void get_r_refuses_a_listing_that_points_outside_the_directory(@TempDir Path dir) throws IOException {
        sandboxFiles.put("/home/user/evil", "x".getBytes(StandardCharsets.UTF_8));
        listing("/home/user/data", entry("/home/user/data/../evil", FileType.FILE_TYPE_FILE, 1));

        assertThat(aenv(
                        false,
                        "files",
                        "get",
                        "-r",
                        ID,
                        "/home/user/data",
                        dir.resolve("copy").toString()))
                .isEqualTo(1);

        assertThat(stderr()).startsWith("error: the sandbox listed a path with an empty, . or .. part");
        assertThat(dir.resolve("evil")).doesNotExist();
        assertThatThrownBy(() -> FilesCommands.localChild(dir, "/data/", "/other/x"))
                .isInstanceOf(ApiException.class);
        assertThat(FilesCommands.localChild(dir, "/data/", "/data/a/b"))
                .isEqualTo(dir.resolve("a").resolve("b"));
    }

    @Test
    void get_r_of_a_file_and_put_r_of_a_missing_directory_are_usage_errors(@TempDir Path dir) {
        server.envd(
                "/filesystem.Filesystem/Stat",
                (request, ex) -> FakeSandboxServer.unary(
                        ex,
                        StatResponse.newBuilder()
                                .setEntry(entry("/etc/hostname", FileType.FILE_TYPE_FILE, 5))
                                .build()));

        assertThat(aenv(false, "files", "get", "-r", ID, "/etc/hostname", dir.toString()))
                .isEqualTo(2);
        assertThat(stderr()).contains("is not a directory in the sandbox");
        assertThat(aenv(false, "files", "put", "-r", ID, dir.resolve("nope").toString(), "/tmp"))
                .isEqualTo(2);
        assertThat(stderr()).contains("no such local directory");
        assertThat(aenv(false, "files", "put", ID, dir.toString(), "/tmp")).isEqualTo(2);
        assertThat(stderr()).contains("put -r copies a directory");
    }

    @Test
    void a_large_transfer_draws_a_progress_bar_on_a_terminal_and_none_elsewhere(@TempDir Path dir) throws IOException {
        Files.write(dir.resolve("big.bin"), new byte[6 << 20]);

        assertThat(aenv(true, "files", "put", ID, dir.resolve("big.bin").toString(), "/tmp/big.bin"))
                .as(stderr())
                .isZero();
        assertThat(stderr())
                .startsWith("\rput ")
                .containsPattern("\rput\\s+6\\.0 MiB / 6\\.0 MiB\\s+\\[=+\\] 100%  [0-9.]+ ([KMG]i)?B/s\u001b\\[K\n$");

        err.reset();
        assertThat(aenv(
                        true,
                        "files",
                        "get",
                        ID,
                        "/tmp/big.bin",
                        dir.resolve("back.bin").toString()))
                .as(stderr())
                .isZero();
        assertThat(stderr()).startsWith("\rget").contains("100%").endsWith("\n");
        assertThat(Files.size(dir.resolve("back.bin"))).isEqualTo(6 << 20);

        err.reset();
        assertThat(aenv(false, "files", "put", ID, dir.resolve("big.bin").toString(), "/tmp/big.bin"))
                .isZero();
        assertThat(stderr()).isEmpty(); // stderr is not a terminal
        Files.writeString(dir.resolve("small.txt"), "small");
        err.reset();
        assertThat(aenv(true, "files", "put", ID, dir.resolve("small.txt").toString(), "/tmp/small"))
                .isZero();
        assertThat(stderr()).isEmpty();
    }

    @Test
    void the_bar_shows_bytes_percent_and_rate_and_redraws_at_most_every_100_ms() {
        assertThat(Progress.render("put", 12 << 20, 40 << 20, 2_000_000_000L))
                .isEqualTo("put  12.0 MiB / 40.0 MiB  [=========>                    ]  30%  6.0 MiB/s");
        assertThat(Progress.render("get", 0, 8 << 20, 0))
                .isEqualTo("get       0 B / 8.0 MiB   [>                             ]   0%  -");
        assertThat(Progress.size(1023)).isEqualTo("1023 B");
        assertThat(Progress.size(1536)).isEqualTo("1.5 KiB");
        assertThat(Progress.size(3L << 30)).isEqualTo("3.0 GiB");

        StringWriter text = new StringWriter();
        AtomicLong now = new AtomicLong();
        Progress bar = new Progress(new PrintWriter(text), "put", 100, now::get);
        bar.add(10); // drawn: the first count
        now.set(50_000_000L);
        bar.add(10); // not drawn: 50 ms later
        now.set(150_000_000L);
        bar.add(80); // drawn
        bar.finish();
        assertThat(text.toString().split("\r", -1)).hasSize(4);
        assertThat(text.toString())
                .contains(" 10%")
                .doesNotContain(" 20%")
                .contains("100%")
                .endsWith("\n");
    }

    private void listing(String root, EntryInfo... entries) {
        server.envd(
                "/filesystem.Filesystem/Stat",
                (request, ex) -> FakeSandboxServer.unary(
                        ex,
                        StatResponse.newBuilder()
                                .setEntry(entry(root, FileType.FILE_TYPE_DIRECTORY, 0))
                                .build()));
        server.envd(
                "/filesystem.Filesystem/ListDir",
                (request, ex) -> FakeSandboxServer.unary(
                        ex,
                        ListDirResponse.newBuilder()
                                .addAllEntries(java.util.List.of(entries))
                                .build()));
    }

    private static EntryInfo entry(String path, FileType type, long size) {
        return EntryInfo.newBuilder()
                .setPath(path)
                .setName(Path.of(path).getFileName().toString())
                .setType(type)
                .setSize(size)
                .build();
    }

    /** The local tree as {@code rel=content|dir/|...}, sorted. */
    private static String tree(Path dir) throws IOException {
        try (Stream<Path> walk = Files.walk(dir)) {
            return walk.filter(p -> !p.equals(dir))
                    .sorted()
                    .map(p -> {
                        String rel = dir.relativize(p).toString();
                        try {
                            return Files.isDirectory(p) ? rel + "/" : rel + "=" + Files.readString(p);
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    })
                    .collect(Collectors.joining("|"));
        }
    }
}
