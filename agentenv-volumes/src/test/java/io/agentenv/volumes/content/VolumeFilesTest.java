package io.agentenv.volumes.content;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.volumes.VolumeException;
import io.agentenv.volumes.content.VolumeFiles.Metadata;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalInt;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class VolumeFilesTest {
    @TempDir
    Path dir;

    private Path root;
    private Path outside;
    private VolumeFiles files;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createDirectory(dir.resolve("root"));
        outside = Files.createDirectory(dir.resolve("outside"));
        Files.writeString(outside.resolve("secret"), "secret");
        files = new VolumeFiles(root, new GuestOwner(0, 1000, false));
    }

    private static InputStream text(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
    }

    private static VolumePath p(String s) {
        return VolumePath.parse(s);
    }

    private String read(String path) throws IOException {
        VolumeFiles.OpenFile file = files.read(p(path));
        try (var channel = file.channel()) {
            ByteBuffer buffer = ByteBuffer.allocate((int) file.size());
            while (buffer.hasRemaining() && channel.read(buffer) > 0) {
                buffer.hasRemaining();
            }
            return new String(buffer.array(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void writesReadsAndStatsAFileMakingItsParents() throws IOException {
        EntryStat stat = files.write(p("/a/b/c.txt"), text("hello"), Metadata.NONE);
        assertThat(stat.type()).isEqualTo(EntryStat.Type.FILE);
        assertThat(stat.path()).isEqualTo("/a/b/c.txt");
        assertThat(stat.name()).isEqualTo("c.txt");
        assertThat(stat.size()).isEqualTo(5);
        assertThat(stat.mode()).isEqualTo(0644);
        assertThat(read("a/b/c.txt")).isEqualTo("hello");
        assertThat(files.stat(p("/a")).type()).isEqualTo(EntryStat.Type.DIRECTORY);
    }

    @Test
    void overwriteReplacesTheWholeFileAndLeavesNoTemporaryFile() throws IOException {
        files.write(p("/f"), text("a long first content"), Metadata.NONE);
        files.write(p("/f"), text("short"), Metadata.NONE);
        assertThat(read("/f")).isEqualTo("short");
        try (var entries = Files.list(root)) {
            assertThat(entries.map(e -> e.getFileName().toString())).containsExactly("f");
        }
    }

    @Test
    void failedWriteKeepsTheOldContentAndRemovesTheTemporaryFile() throws IOException {
        files.write(p("/f"), text("old"), Metadata.NONE);
        InputStream broken = new java.io.SequenceInputStream(text("0123456789"), new InputStream() {
            @Override
            public int read() throws IOException {
                throw new IOException("connection reset");
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                throw new IOException("connection reset");
            }
        });
        assertThatThrownBy(() -> files.write(p("/f"), broken, Metadata.NONE)).isInstanceOf(VolumeException.class);
        assertThat(read("/f")).isEqualTo("old");
        try (var entries = Files.list(root)) {
            assertThat(entries.map(e -> e.getFileName().toString())).containsExactly("f");
        }
    }

    @Test
    void listsOneLevelOrDeeper() {
        files.write(p("/d/x"), text("1"), Metadata.NONE);
        files.write(p("/d/sub/y"), text("2"), Metadata.NONE);
        assertThat(files.list(p("/d"), 1)).extracting(EntryStat::path).containsExactly("/d/sub", "/d/x");
        assertThat(files.list(p("/d"), 2)).extracting(EntryStat::path).containsExactly("/d/sub", "/d/sub/y", "/d/x");
        assertThat(files.list(p("/"), 1)).extracting(EntryStat::name).containsExactly("d");
    }

    @Test
    void makeDirNeedsItsParentUnlessForced() {
        assertKind(() -> files.makeDir(p("/x/y"), false, Metadata.NONE), VolumeException.Kind.NOT_FOUND);
        assertThat(files.makeDir(p("/x/y"), true, Metadata.NONE).type()).isEqualTo(EntryStat.Type.DIRECTORY);
        assertKind(() -> files.makeDir(p("/x/y"), false, Metadata.NONE), VolumeException.Kind.CONFLICT);
        assertThat(files.makeDir(p("/x/y"), true, Metadata.NONE).path()).isEqualTo("/x/y");
    }

    @Test
    void modeIsAppliedWithoutSetIdBits() {
        Metadata meta = new Metadata(OptionalInt.empty(), OptionalInt.empty(), OptionalInt.of(06755));
        assertThat(files.write(p("/run.sh"), text("#!/bin/sh"), meta).mode()).isEqualTo(0755);
        Metadata dirMode = new Metadata(OptionalInt.empty(), OptionalInt.empty(), OptionalInt.of(01777));
        assertThat(files.makeDir(p("/tmp"), false, dirMode).mode()).isEqualTo(01777);
    }

    @Test
    void renamesAndRefusesToReplaceUnlessAsked() {
        files.write(p("/a"), text("A"), Metadata.NONE);
        files.write(p("/b"), text("B"), Metadata.NONE);
        assertKind(() -> files.rename(p("/a"), p("/b"), false), VolumeException.Kind.CONFLICT);
        assertThat(files.rename(p("/a"), p("/c"), false).path()).isEqualTo("/c");
        assertKind(() -> files.stat(p("/a")), VolumeException.Kind.NOT_FOUND);
        files.rename(p("/c"), p("/b"), true);
        assertThat(files.list(p("/"), 1)).extracting(EntryStat::name).containsExactly("b");
    }

    @Test
    void replacingAFileWithADirectoryOrANonEmptyDirectoryIsConflict() {
        files.makeDir(p("/d"), false, Metadata.NONE);
        files.write(p("/f"), text("x"), Metadata.NONE);
        files.write(p("/full/inside"), text("x"), Metadata.NONE);
        assertKind(() -> files.rename(p("/d"), p("/f"), true), VolumeException.Kind.CONFLICT);
        assertKind(() -> files.rename(p("/f"), p("/d"), true), VolumeException.Kind.CONFLICT);
        assertKind(() -> files.rename(p("/d"), p("/full"), true), VolumeException.Kind.CONFLICT);
        assertThat(files.list(p("/"), 1)).extracting(EntryStat::name).containsExactly("d", "f", "full");
    }

    @Test
    void refusesToMoveADirectoryIntoItselfOrTheRoot() {
        files.makeDir(p("/d"), false, Metadata.NONE);
        assertKind(() -> files.rename(p("/d"), p("/d/e"), false), VolumeException.Kind.INVALID_ARGUMENT);
        assertKind(() -> files.rename(p("/"), p("/x"), false), VolumeException.Kind.INVALID_ARGUMENT);
        assertKind(() -> files.rename(p("/d"), p("/"), true), VolumeException.Kind.INVALID_ARGUMENT);
    }

    @Test
    void removesFilesAndWholeDirectoriesButNotTheRoot() {
        files.write(p("/d/e/f"), text("1"), Metadata.NONE);
        files.write(p("/g"), text("1"), Metadata.NONE);
        files.remove(p("/g"));
        files.remove(p("/d"));
        assertThat(files.list(p("/"), 1)).isEmpty();
        assertKind(() -> files.remove(p("/")), VolumeException.Kind.INVALID_ARGUMENT);
        assertKind(() -> files.remove(p("/nope")), VolumeException.Kind.NOT_FOUND);
        assertThat(root).isDirectory();
    }

    @Test
    void absoluteSymlinkedParentIsNotFollowed() throws IOException {
        Files.createSymbolicLink(root.resolve("out"), outside);
        assertKind(() -> files.read(p("/out/secret")), VolumeException.Kind.INVALID_ARGUMENT);
        assertKind(() -> files.stat(p("/out/secret")), VolumeException.Kind.INVALID_ARGUMENT);
        assertKind(() -> files.list(p("/out"), 1), VolumeException.Kind.INVALID_ARGUMENT);
        assertKind(
                () -> files.write(p("/out/secret"), text("pwned"), Metadata.NONE),
                VolumeException.Kind.INVALID_ARGUMENT);
        assertKind(
                () -> files.write(p("/out/new"), text("pwned"), Metadata.NONE), VolumeException.Kind.INVALID_ARGUMENT);
        assertKind(() -> files.makeDir(p("/out/new"), true, Metadata.NONE), VolumeException.Kind.INVALID_ARGUMENT);
        assertKind(() -> files.remove(p("/out/secret")), VolumeException.Kind.INVALID_ARGUMENT);
        assertKind(() -> files.rename(p("/out/secret"), p("/stolen"), false), VolumeException.Kind.INVALID_ARGUMENT);
        assertThat(outside.resolve("secret")).hasContent("secret");
        assertThat(outside.resolve("new")).doesNotExist();
    }

    @Test
    void relativeSymlinkedParentIsNotFollowed() throws IOException {
        Files.createDirectory(root.resolve("d"));
        Files.createSymbolicLink(root.resolve("d/up"), Path.of("../../outside"));
        assertKind(() -> files.read(p("/d/up/secret")), VolumeException.Kind.INVALID_ARGUMENT);
        assertKind(
                () -> files.write(p("/d/up/x"), text("pwned"), Metadata.NONE), VolumeException.Kind.INVALID_ARGUMENT);
        assertThat(outside.resolve("x")).doesNotExist();
    }

    @Test
    void finalSymlinkIsActedOnItselfNeverItsTarget() throws IOException {
        Files.createSymbolicLink(root.resolve("link"), outside.resolve("secret"));
        EntryStat stat = files.stat(p("/link"));
        assertThat(stat.type()).isEqualTo(EntryStat.Type.SYMLINK);
        assertThat(stat.target()).contains(outside.resolve("secret").toString());
        assertKind(() -> files.read(p("/link")), VolumeException.Kind.INVALID_ARGUMENT);

        files.write(p("/link"), text("mine"), Metadata.NONE); // replaces the link, not its target
        assertThat(outside.resolve("secret")).hasContent("secret");
        assertThat(Files.isSymbolicLink(root.resolve("link"))).isFalse();

        Files.createSymbolicLink(root.resolve("dirlink"), outside);
        files.remove(p("/dirlink"));
        assertThat(outside.resolve("secret")).exists();
        assertThat(root.resolve("dirlink")).doesNotExist();
    }

    @Test
    void removeOfADirectoryDoesNotFollowLinksInside() throws IOException {
        Files.createDirectory(root.resolve("d"));
        Files.createSymbolicLink(root.resolve("d/out"), outside);
        files.remove(p("/d"));
        assertThat(outside.resolve("secret")).hasContent("secret");
    }

    @Test
    void listingDoesNotDescendThroughLinks() throws IOException {
        Files.createSymbolicLink(root.resolve("out"), outside);
        assertThat(files.list(p("/"), 5)).extracting(EntryStat::path).containsExactly("/out");
    }

    @Test
    void writeOverADirectoryIsConflict() {
        files.makeDir(p("/d"), false, Metadata.NONE);
        assertKind(() -> files.write(p("/d"), text("x"), Metadata.NONE), VolumeException.Kind.CONFLICT);
        assertKind(() -> files.write(p("/"), text("x"), Metadata.NONE), VolumeException.Kind.INVALID_ARGUMENT);
    }

    @Test
    void fileAsAParentIsInvalid() {
        files.write(p("/f"), text("x"), Metadata.NONE);
        assertKind(() -> files.write(p("/f/g"), text("x"), Metadata.NONE), VolumeException.Kind.INVALID_ARGUMENT);
        assertKind(() -> files.read(p("/f/g")), VolumeException.Kind.INVALID_ARGUMENT);
    }

    private static void assertKind(ThrowingCallable call, VolumeException.Kind kind) {
        assertThatThrownBy(call)
                .isInstanceOf(VolumeException.class)
                .extracting(e -> ((VolumeException) e).kind())
                .isEqualTo(kind);
    }
}
