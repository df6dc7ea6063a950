package io.agentenv.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the COPY step's script does to files, run on this machine in a temporary directory: once with sh and the GNU
 * tools, once with nothing but busybox (sh, tar, mv, chown, ...) when busybox is installed. The archives are made with
 * tar here as the SDK makes them (paths relative to the context directory, gzip or not).
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class CopyScriptTest {
    private static final Path BUSYBOX = Path.of("/usr/bin/busybox");
    private static final List<String> APPLETS =
            List.of("sh", "tar", "gzip", "mkdir", "rm", "mv", "chown", "chmod", "dirname", "cut", "awk", "cat", "pwd");

    @TempDir
    Path dir;

    private boolean busybox;
    private Path context;
    private Path root;

    @ParameterizedTest
    @ValueSource(strings = {"gnu", "busybox"})
    void files_directories_and_symlinks_land_where_e2b_puts_them(String tools) throws Exception {
        busybox = tools.equals("busybox");
        assumeTrue(!busybox || Files.isExecutable(BUSYBOX), "busybox is not installed");
        String owner = ownerName();
        context = Files.createDirectories(dir.resolve("context"));
        root = Files.createDirectories(dir.resolve("root"));
        write(context.resolve("file.txt"), "hello\n");
        write(context.resolve("dir/a.txt"), "a\n");
        write(context.resolve("dir/.hidden"), "hidden\n");
        write(context.resolve("dir/sub/b.txt"), "b\n");
        Files.createSymbolicLink(context.resolve("link"), Path.of("file.txt"));

        // a file into a directory (dest ends with '/'), with a mode
        place("file.txt", true, "file.txt", root + "/out/", "0600", Optional.empty());
        Path file = root.resolve("out/file.txt");
        assertThat(file).hasContent("hello");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
                .isEqualTo("rw-------");
        assertThat(Files.getOwner(file).getName()).isEqualTo(owner);

        // a directory merged into one that exists: its directories keep their modes, a file symlink is replaced
        Path app = Files.createDirectories(root.resolve("app"));
        write(app.resolve("keep.txt"), "kept\n");
        Files.createDirectories(app.resolve("sub"));
        Files.setPosixFilePermissions(app.resolve("sub"), PosixFilePermissions.fromString("rwx------"));
        write(root.resolve("victim.txt"), "untouched\n");
        Files.createSymbolicLink(app.resolve("a.txt"), Path.of("../victim.txt"));
        place("dir", false, "dir", app.toString(), "", Optional.empty());
        assertThat(app.resolve("a.txt")).isRegularFile().hasContent("a");
        assertThat(root.resolve("victim.txt")).hasContent("untouched");
        assertThat(app.resolve(".hidden")).hasContent("hidden");
        assertThat(app.resolve("sub/b.txt")).hasContent("b");
        assertThat(app.resolve("keep.txt")).hasContent("kept");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(app.resolve("sub"))))
                .isEqualTo("rwx------");
        assertThat(Files.getOwner(app.resolve("sub/b.txt")).getName()).isEqualTo(owner);

        // a directory to a relative dest that does not exist: taken from the working directory, parents made
        Path workdir = Files.createDirectories(root.resolve("workdir"));
        place("dir", true, "dir", "deep/newdir", "", Optional.of(workdir));
        assertThat(workdir.resolve("deep/newdir/sub/b.txt")).hasContent("b");
        assertThat(Files.getOwner(workdir.resolve("deep/newdir")).getName()).isEqualTo(owner);

        // a symlink is kept as sent, and a wildcard's files go into dest
        place("link", true, "link", root + "/out/ln", "0644", Optional.empty());
        assertThat(Files.readSymbolicLink(root.resolve("out/ln"))).isEqualTo(Path.of("file.txt"));
        assertThat(Files.getOwner(root.resolve("out/ln"), LinkOption.NOFOLLOW_LINKS)
                        .getName())
                .isEqualTo(owner);
        place("file.txt", false, "", root + "/glob", "", Optional.empty());
        assertThat(root.resolve("glob/file.txt")).hasContent("hello");

        try (var left = Files.list(dir)) {
            assertThat(left.map(p -> p.getFileName().toString()).filter(name -> !name.equals("bin")))
                    .as("the archives and extraction directories are gone")
                    .containsExactlyInAnyOrder("context", "root");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"gnu", "busybox"})
    void a_file_does_not_replace_a_directory_and_the_script_fails(String tools) throws Exception {
        busybox = tools.equals("busybox");
        assumeTrue(!busybox || Files.isExecutable(BUSYBOX), "busybox is not installed");
        context = Files.createDirectories(dir.resolve("context"));
        root = Files.createDirectories(dir.resolve("root"));
        write(context.resolve("dir/a.txt"), "a\n");
        Files.createDirectories(root.resolve("app/a.txt"));

        Result result = run("dir", true, "dir", root + "/app", "", Optional.empty());

        assertThat(result.exit()).isNotZero();
        assertThat(result.output()).contains("cannot replace directory");
        assertThat(root.resolve("app/a.txt")).isDirectory();
        assertThat(dir.resolve("archive.tar")).doesNotExist();
    }

    private record Result(int exit, String output) {}

    private void place(String member, boolean gzip, String base, String dest, String mode, Optional<Path> cwd)
            throws Exception {
        Result result = run(member, gzip, base, dest, mode, cwd);
        assertThat(result.exit()).as(result.output()).isZero();
    }

    private Result run(String member, boolean gzip, String base, String dest, String mode, Optional<Path> cwd)
            throws Exception {
        Path archive = dir.resolve("archive.tar");
        exec(List.of("tar", gzip ? "-czf" : "-cf", archive.toString(), "-C", context.toString(), member), dir);
        String script = CopyStep.script(
                archive.toString(),
                dir.resolve("work").toString(),
                gzip,
                base,
                dest,
                ownerName() + ":",
                mode,
                Optional.empty());
        List<String> command = new ArrayList<>();
        if (busybox) {
            command.addAll(List.of(BUSYBOX.toString(), "sh", "-c", script));
        } else {
            command.addAll(List.of("/bin/sh", "-c", script));
        }
        return exec(command, cwd.orElse(root));
    }

    private Result exec(List<String> command, Path cwd) throws IOException, InterruptedException {
        ProcessBuilder builder =
                new ProcessBuilder(command).directory(cwd.toFile()).redirectErrorStream(true);
        if (busybox) {
            builder.environment().put("PATH", applets().toString());
        }
        Process process = builder.start();
        byte[] output = process.getInputStream().readAllBytes();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Result(process.exitValue(), new String(output, StandardCharsets.UTF_8));
    }

    /** A directory with busybox's applets only, for the script's PATH (tar here is busybox's, not GNU's). */
    private Path applets() throws IOException {
        Path bin = dir.resolve("bin");
        if (!Files.isDirectory(bin)) {
            Files.createDirectories(bin);
            for (String applet : APPLETS) {
                Files.createSymbolicLink(bin.resolve(applet), BUSYBOX);
            }
        }
        return bin;
    }

    /** Root gives the files to nobody (so that chown is seen to work); anyone else to themselves. */
    private static String ownerName() {
        String user = System.getProperty("user.name");
        return user.equals("root") ? "nobody" : user;
    }

    private static void write(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }
}
