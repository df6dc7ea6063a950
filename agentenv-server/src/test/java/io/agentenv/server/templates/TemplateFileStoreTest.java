package io.agentenv.server.templates;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.orchestrator.ErrorKind;
import io.agentenv.orchestrator.TemplateFiles;
import io.agentenv.spi.TemplateId;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The uploads of COPY steps on disk, and the check that keeps an archive from writing outside its directory. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class TemplateFileStoreTest {
    private static final TemplateId TEMPLATE = new TemplateId("tpl1");
    private static final String HASH = "0123456789abcdef".repeat(4);

    @TempDir
    Path dir;

    /** A tar archive of the members a test adds. */
    private static final class Tar {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final TarArchiveOutputStream out;

        Tar() {
            out = new TarArchiveOutputStream(bytes);
            out.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
        }

        Tar file(String name, String content) throws IOException {
            byte[] data = content.getBytes(StandardCharsets.UTF_8);
            TarArchiveEntry entry = new TarArchiveEntry(name, true);
            entry.setSize(data.length);
            out.putArchiveEntry(entry);
            out.write(data);
            out.closeArchiveEntry();
            return this;
        }

        Tar dir(String name) throws IOException {
            return entry(new TarArchiveEntry(name.endsWith("/") ? name : name + "/", true));
        }

        Tar link(String name, byte flag, String target) throws IOException {
            TarArchiveEntry entry = new TarArchiveEntry(name, flag, true);
            entry.setLinkName(target);
            return entry(entry);
        }

        Tar special(String name, byte flag) throws IOException {
            return entry(new TarArchiveEntry(name, flag, true));
        }

        private Tar entry(TarArchiveEntry entry) throws IOException {
            out.putArchiveEntry(entry);
            out.closeArchiveEntry();
            return this;
        }

        byte[] bytes() throws IOException {
            out.close();
            return bytes.toByteArray();
        }

        byte[] gzipped() throws IOException {
            ByteArrayOutputStream zipped = new ByteArrayOutputStream();
            try (OutputStream gzip = new GZIPOutputStream(zipped)) {
                gzip.write(bytes());
            }
            return zipped.toByteArray();
        }
    }

    private TemplateFileStore store() throws IOException {
        return new TemplateFileStore(dir.resolve("files"));
    }

    private static InputStream in(byte[] bytes) {
        return new ByteArrayInputStream(bytes);
    }

    @Test
    void a_saved_archive_is_present_and_read_back_whole_with_its_compression() throws Exception {
        TemplateFileStore store = store();
        byte[] archive = new Tar()
                .dir("app")
                .file("app/main.py", "print(1)\n")
                .link("app/current", TarArchiveEntry.LF_SYMLINK, "/etc/hostname")
                .link("app/same.py", TarArchiveEntry.LF_LINK, "app/main.py")
                .file("./" + "long-name-".repeat(20) + ".txt", "pax\n")
                .gzipped();
        assertThat(store.present(TEMPLATE, HASH)).isFalse();
        assertThat(store.archive(TEMPLATE, HASH)).isEmpty();

        store.save(TEMPLATE, HASH, in(archive), 1 << 20);

        assertThat(store.present(TEMPLATE, HASH)).isTrue();
        assertThat(store.present(new TemplateId("other"), HASH)).isFalse();
        TemplateFiles.Archive read = store.archive(TEMPLATE, HASH).orElseThrow();
        assertThat(read.gzip()).isTrue();
        assertThat(read.size()).isEqualTo(archive.length);
        try (InputStream content = read.content().get()) {
            assertThat(content.readAllBytes()).isEqualTo(archive);
        }
        assertThat(dir.resolve("files/tpl1/" + HASH)).exists();
    }

    @Test
    void deleting_a_templates_uploads_removes_them_and_no_others() throws Exception {
        TemplateFileStore store = store();
        TemplateId other = new TemplateId("tpl2");
        store.save(TEMPLATE, HASH, in(new Tar().file("a", "1").bytes()), 1 << 20);
        store.save(TEMPLATE, "f".repeat(64), in(new Tar().file("b", "2").bytes()), 1 << 20);
        store.save(other, HASH, in(new Tar().file("c", "3").bytes()), 1 << 20);

        store.deleteAll(TEMPLATE);
        store.deleteAll(new TemplateId("never-uploaded"));

        assertThat(store.present(TEMPLATE, HASH)).isFalse();
        assertThat(dir.resolve("files/tpl1")).doesNotExist();
        assertThat(store.present(other, HASH)).isTrue();
        assertThat(dir.resolve("files")).exists();
    }

    @Test
    void a_second_upload_of_a_hash_replaces_the_first() throws Exception {
        TemplateFileStore store = store();
        store.save(TEMPLATE, HASH, in(new Tar().file("a", "1").bytes()), 1 << 20);
        byte[] second = new Tar().file("a", "2").bytes();

        store.save(TEMPLATE, HASH, in(second), 1 << 20);

        TemplateFiles.Archive read = store.archive(TEMPLATE, HASH).orElseThrow();
        assertThat(read.gzip()).isFalse();
        try (InputStream content = read.content().get()) {
            assertThat(content.readAllBytes()).isEqualTo(second);
        }
    }

    @Test
    void members_that_could_leave_the_directory_are_refused_and_nothing_is_kept() throws Exception {
        TemplateFileStore store = store();
        assertRefused(store, new Tar().file("/etc/passwd", "x").bytes(), "is an absolute path");
        assertRefused(store, new Tar().file("../outside", "x").bytes(), "leaves its directory");
        assertRefused(store, new Tar().file("a/../../outside", "x").gzipped(), "leaves its directory");
        assertRefused(
                store,
                new Tar()
                        .link("etc", TarArchiveEntry.LF_SYMLINK, "/etc")
                        .file("etc/passwd", "x")
                        .bytes(),
                "is below the symbolic link etc");
        assertRefused(
                store,
                new Tar()
                        .link("d", TarArchiveEntry.LF_SYMLINK, "/root")
                        .dir("d")
                        .file("./d/.ssh/authorized_keys", "x")
                        .bytes(),
                "is below the symbolic link d");
        assertRefused(
                store,
                new Tar().link("shadow", TarArchiveEntry.LF_LINK, "/etc/shadow").bytes(),
                "hard link out of its directory");
        assertRefused(
                store,
                new Tar().link("later", TarArchiveEntry.LF_LINK, "missing").bytes(),
                "hard link to something that is not a file");
        assertRefused(
                store, new Tar().special("dev/sda", TarArchiveEntry.LF_BLK).bytes(), "special file");
        assertRefused(store, new Tar().special("fifo", TarArchiveEntry.LF_FIFO).bytes(), "special file");
        assertRefused(store, "not a tar archive ".repeat(100).getBytes(StandardCharsets.UTF_8), "not a readable tar");
        assertRefused(store, "short".getBytes(StandardCharsets.UTF_8), "not a tar archive, or one without members");
        assertRefused(store, new Tar().bytes(), "not a tar archive, or one without members");

        try (var left = Files.list(dir.resolve("files/tpl1"))) {
            assertThat(left).as("nothing of a refused upload is kept").isEmpty();
        }
        assertThat(store.present(TEMPLATE, HASH)).isFalse();
    }

    @Test
    void an_upload_over_the_limit_is_too_large_and_leaves_nothing() throws Exception {
        TemplateFileStore store = store();
        byte[] archive = new Tar().file("big", "x".repeat(10_000)).bytes();

        assertThatThrownBy(() -> store.save(TEMPLATE, HASH, in(archive), 4096))
                .isInstanceOf(TemplateFileStore.TooLarge.class);

        try (var left = Files.list(dir.resolve("files/tpl1"))) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void a_malformed_hash_is_refused_and_the_leftovers_of_a_crash_are_removed() throws Exception {
        TemplateFileStore store = store();
        assertThatThrownBy(() ->
                        store.save(TEMPLATE, "../x", in(new Tar().file("a", "1").bytes()), 1 << 20))
                .isInstanceOfSatisfying(
                        AgentEnvException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT));
        assertThat(store.present(TEMPLATE, "../x")).isFalse();
        Path leftover = Files.createDirectories(dir.resolve("files/tpl2")).resolve(".upload-123");
        Files.writeString(leftover, "half an upload");
        Files.writeString(dir.resolve("files/tpl2/" + HASH), "kept");

        store();

        assertThat(leftover).doesNotExist();
        assertThat(dir.resolve("files/tpl2/" + HASH)).exists();
    }

    private static void assertRefused(TemplateFileStore store, byte[] archive, String why) {
        assertThatThrownBy(() -> store.save(TEMPLATE, HASH, in(archive), 1 << 20))
                .isInstanceOfSatisfying(AgentEnvException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains(why);
                });
    }
}
