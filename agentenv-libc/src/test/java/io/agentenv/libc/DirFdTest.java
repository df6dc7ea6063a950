package io.agentenv.libc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirFdTest {
    @TempDir
    Path dir;

    private Path root;
    private Path outside;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createDirectory(dir.resolve("root"));
        outside = Files.createDirectory(dir.resolve("outside"));
        Files.writeString(outside.resolve("secret"), "secret");
        Files.createDirectories(root.resolve("a/b"));
        Files.writeString(root.resolve("a/file"), "inside");
        Files.createSymbolicLink(root.resolve("abs"), outside);
        Files.createSymbolicLink(root.resolve("a/rel"), Path.of("../../outside"));
    }

    @Test
    void beneathOpensDirectoriesAndRefusesLinksClimbsAndFiles() throws IOException {
        try (DirFd top = DirFd.open(root);
                DirFd b = top.beneath("a/b")) {
            assertThat(Files.isSameFile(b.path(), root.resolve("a/b"))).isTrue();
            assertErrno(() -> top.beneath("abs").close(), ErrnoException.ELOOP);
            assertErrno(() -> top.beneath("a/rel").close(), ErrnoException.ELOOP);
            assertErrno(() -> top.beneath("a/../../outside").close(), ErrnoException.EXDEV);
            assertErrno(() -> top.beneath("a/file").close(), ErrnoException.ENOTDIR);
            assertErrno(() -> top.beneath("nope").close(), ErrnoException.ENOENT);
        }
    }

    @Test
    void keepsNamingItsDirectoryAfterThePathChanges() throws IOException {
        try (DirFd top = DirFd.open(root);
                DirFd a = top.beneath("a")) {
            Files.move(root.resolve("a"), root.resolve("moved"));
            Files.createSymbolicLink(root.resolve("a"), outside);
            assertThat(a.makeDir("made", 0755)).isTrue();
            assertThat(root.resolve("moved/made")).isDirectory();
            assertThat(outside.resolve("made")).doesNotExist();
        }
    }

    @Test
    void entryCallsActOnALinkItselfOrRefuseIt() throws IOException {
        try (DirFd top = DirFd.open(root)) {
            assertErrno(() -> top.changeMode("abs", 0777), ErrnoException.EOPNOTSUPP);
            assertErrno(() -> top.openRegularFile("abs").close(), ErrnoException.ELOOP);
            top.unlink("abs");
            assertThat(Files.exists(root.resolve("abs"), LinkOption.NOFOLLOW_LINKS))
                    .isFalse();
            assertThat(outside.resolve("secret")).hasContent("secret");
            assertThat(Files.getPosixFilePermissions(outside))
                    .isNotEqualTo(PosixFilePermissions.fromString("rwxrwxrwx"));
        }
    }

    @Test
    void makeDirSaysWhetherItMadeOne() throws IOException {
        try (DirFd top = DirFd.open(root)) {
            assertThat(top.makeDir("new", 0700)).isTrue();
            assertThat(top.makeDir("new", 0700)).isFalse();
            assertThat(top.makeDir("abs", 0700)).isFalse();
            top.removeDir("new");
            assertErrno(() -> top.removeDir("a"), ErrnoException.ENOTEMPTY);
        }
    }

    @Test
    void renameReplacesOnlyWhenAsked() throws IOException {
        Files.writeString(root.resolve("x"), "x");
        Files.writeString(root.resolve("y"), "y");
        try (DirFd top = DirFd.open(root);
                DirFd a = top.beneath("a")) {
            assertErrno(() -> top.rename("x", top, "y", false), ErrnoException.EEXIST);
            top.rename("x", a, "x", false);
            assertThat(root.resolve("a/x")).hasContent("x");
            a.rename("x", top, "y", true);
            assertThat(root.resolve("y")).hasContent("x");
        }
    }

    @Test
    void opensRegularFilesOnlyAndNeverBlocksOnAFifo() throws Exception {
        Path fifo = root.resolve("fifo");
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertThat(mkfifo.waitFor()).isZero();
        try (DirFd top = DirFd.open(root);
                DirFd a = top.beneath("a")) {
            try (FileChannel file = a.openRegularFile("file")) {
                ByteBuffer buffer = ByteBuffer.allocate(16);
                file.read(buffer);
                assertThat(new String(buffer.array(), 0, buffer.position(), StandardCharsets.UTF_8))
                        .isEqualTo("inside");
            }
            assertThatThrownBy(() -> top.openRegularFile("fifo").close()).isInstanceOf(FileSystemException.class);
            assertThatThrownBy(() -> top.openRegularFile("a").close()).isInstanceOf(FileSystemException.class);
        }
    }

    @Test
    void jdkCallsThroughItsPathStayInItsDirectory() throws IOException {
        try (DirFd top = DirFd.open(root);
                DirFd a = top.beneath("a")) {
            try (FileChannel out =
                    FileChannel.open(a.path("new"), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                out.write(ByteBuffer.wrap("new".getBytes(StandardCharsets.UTF_8)));
            }
            assertThat(root.resolve("a/new")).hasContent("new");
            assertThat(Files.isSymbolicLink(a.path("rel"))).isTrue();
            assertThatThrownBy(() ->
                            FileChannel.open(a.path("rel"), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE))
                    .isInstanceOf(java.nio.file.FileAlreadyExistsException.class);
            assertThatThrownBy(() -> a.path("../x")).isInstanceOf(IllegalArgumentException.class);
        }
    }

    private static void assertErrno(ThrowingCallable call, int errno) {
        assertThatThrownBy(call)
                .isInstanceOf(ErrnoException.class)
                .extracting(e -> ((ErrnoException) e).errno())
                .isEqualTo(errno);
    }
}
