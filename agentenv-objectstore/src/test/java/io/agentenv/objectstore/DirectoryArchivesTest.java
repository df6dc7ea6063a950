package io.agentenv.objectstore;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Trees in and out of a store; archives from elsewhere that try to write outside their target are refused. */
class DirectoryArchivesTest {

    @TempDir
    Path scratch;

    private ObjectStore store;
    private DirectoryArchives archives;
    private Path restoreDir;
    private Path outside;

    @BeforeEach
    void open() throws Exception {
        store = new FileSystemObjectStore(Files.createDirectory(scratch.resolve("store")));
        archives = new DirectoryArchives(store);
        restoreDir = Files.createDirectory(scratch.resolve("restore"));
        outside = Files.createDirectory(scratch.resolve("outside"));
        Files.writeString(outside.resolve("victim"), "untouched");
    }

    /** One crafted entry: its name, type, link target and content. */
    private record Entry(String name, byte type, String link, String content) {
        static Entry dir(String name) {
            return new Entry(name, TarConstants.LF_DIR, null, null);
        }

        static Entry file(String name, String content) {
            return new Entry(name, TarConstants.LF_NORMAL, null, content);
        }

        static Entry link(String name, String target) {
            return new Entry(name, TarConstants.LF_SYMLINK, target, null);
        }

        static Entry special(String name, byte type, String link) {
            return new Entry(name, type, link, null);
        }
    }

    /** Stores a tar of exactly these entries (names kept as written, absolute ones too) under {@code key}. */
    private ObjectKey crafted(String key, Entry... entries) throws Exception {
        ObjectKey objectKey = ObjectKey.of(key);
        store.put(objectKey, out -> writeTar(out, List.of(entries)));
        return objectKey;
    }

    private static void writeTar(OutputStream out, List<Entry> entries) throws IOException {
        TarArchiveOutputStream tar = new TarArchiveOutputStream(out);
        tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
        for (Entry e : entries) {
            TarArchiveEntry entry = new TarArchiveEntry(e.name(), e.type(), true);
            if (e.link() != null) {
                entry.setLinkName(e.link());
            }
            byte[] content = e.content() == null ? new byte[0] : e.content().getBytes(StandardCharsets.UTF_8);
            entry.setSize(content.length);
            entry.setMode(e.type() == TarConstants.LF_DIR ? 0755 : 0644);
            tar.putArchiveEntry(entry);
            tar.write(content);
            tar.closeArchiveEntry();
        }
        tar.finish();
    }

    /** Unpacking {@code key} is refused, and leaves nothing in the restore directory or outside it. */
    private void assertRefused(ObjectKey key, String why) throws Exception {
        Path target = restoreDir.resolve("tree");
        assertThatThrownBy(() -> archives.getTree(key, target))
                .isInstanceOf(ObjectStoreException.Failed.class)
                .hasMessageContaining("refused")
                .hasMessageContaining(why);
        assertThat(target).doesNotExist();
        assertThat(TestContent.names(restoreDir)).isEmpty();
        assertThat(TestContent.names(outside)).containsExactly("victim");
        assertThat(Files.readString(outside.resolve("victim"))).isEqualTo("untouched");
        assertThat(TestContent.names(scratch)).containsExactly("outside", "restore", "store");
    }

    @Test
    void aDotDotEntryIsRefused() throws Exception {
        assertRefused(crafted("dotdot", Entry.dir("./"), Entry.file("../outside/victim", "overwritten")), "'..'");
        assertRefused(crafted("dotdot-deep", Entry.dir("a/"), Entry.file("a/../../x", "escaped")), "'..'");
    }

    @Test
    void anAbsoluteEntryIsRefused() throws Exception {
        assertRefused(crafted("absolute", Entry.file(outside.resolve("victim").toString(), "overwritten")), "absolute");
    }

    @Test
    void aFileThroughASymbolicLinkIsRefused() throws Exception {
        assertRefused(
                crafted("through-link", Entry.link("link", outside.toString()), Entry.file("link/victim", "x")),
                "not a directory");
        assertRefused(
                crafted("through-relative-link", Entry.link("up", ".."), Entry.file("up/escaped", "x")),
                "not a directory");
        assertRefused(
                crafted("dir-over-link", Entry.link("d", outside.toString()), Entry.dir("d/")), "a directory where");
    }

    @Test
    void aFileOverASymbolicLinkIsRefusedWithoutWritingThroughIt() throws Exception {
        assertRefused(
                crafted(
                        "file-over-link",
                        Entry.link("victim", outside.resolve("victim").toString()),
                        Entry.file("victim", "overwritten")),
                "duplicate");
    }

    @Test
    void hardLinksDevicesAndFifosAreRefused() throws Exception {
        assertRefused(crafted("hard", Entry.special("hard", TarConstants.LF_LINK, "/etc/passwd")), "entry type");
        assertRefused(crafted("chr", Entry.special("null", TarConstants.LF_CHR, null)), "entry type");
        assertRefused(crafted("blk", Entry.special("sda", TarConstants.LF_BLK, null)), "entry type");
        assertRefused(crafted("fifo", Entry.special("pipe", TarConstants.LF_FIFO, null)), "entry type");
    }

    @Test
    void entriesBeforeTheirDirectoryAndDuplicatesAreRefused() throws Exception {
        assertRefused(crafted("orphan", Entry.file("a/b", "x")), "not in the archive before it");
        assertRefused(crafted("twice", Entry.file("f", "1"), Entry.file("f", "2")), "duplicate");
        assertRefused(crafted("dir-over-file", Entry.file("f", "1"), Entry.dir("f/")), "a directory where");
    }

    @Test
    void anArchiveFromElsewhereUnpacks() throws Exception {
        ObjectKey key = crafted(
                "plain",
                Entry.dir("etc/"),
                Entry.file("etc/hostname", "sandbox\n"),
                Entry.link("etc/localtime", "/usr/share/zoneinfo/UTC"),
                Entry.file("./top", "t"));
        Path target = restoreDir.resolve("tree");

        archives.getTree(key, target);

        assertThat(Files.readString(target.resolve("etc/hostname"))).isEqualTo("sandbox\n");
        assertThat(Files.readSymbolicLink(target.resolve("etc/localtime")))
                .isEqualTo(Path.of("/usr/share/zoneinfo/UTC"));
        assertThat(Files.readString(target.resolve("top"))).isEqualTo("t");
    }

    @Test
    void specialBitsAndOwnersAreKept() throws Exception {
        Path tree = Files.createDirectory(scratch.resolve("tree"));
        Path setuid = Files.writeString(tree.resolve("setuid"), "x");
        Files.setAttribute(setuid, "unix:mode", 04755);
        Path sticky = Files.createDirectory(tree.resolve("tmp"));
        Files.setAttribute(sticky, "unix:mode", 01777);
        Path owned = Files.writeString(tree.resolve("owned"), "y");
        boolean root = Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        if (root) {
            Files.setAttribute(owned, "unix:uid", 1234, NOFOLLOW_LINKS);
            Files.setAttribute(owned, "unix:gid", 5678, NOFOLLOW_LINKS);
        }
        ObjectKey key = ObjectKey.of("bits");
        archives.putTree(key, tree);
        Path target = restoreDir.resolve("tree");

        archives.getTree(key, target);

        assertThat(Files.getAttribute(target.resolve("setuid"), "unix:mode")).isEqualTo(0100000 | 04755);
        assertThat(Files.getAttribute(target.resolve("tmp"), "unix:mode")).isEqualTo(0040000 | 01777);
        assertThat(Files.getAttribute(target.resolve("owned"), "unix:uid"))
                .isEqualTo(Files.getAttribute(owned, "unix:uid"));
        assertThat(Files.getAttribute(target.resolve("owned"), "unix:gid"))
                .isEqualTo(Files.getAttribute(owned, "unix:gid"));
        TreeAssertions.assertSameTree(tree, target);
    }

    @Test
    void hardLinkedFilesArePackedAsCopies() throws Exception {
        Path tree = Files.createDirectory(scratch.resolve("tree"));
        Path first = Files.writeString(tree.resolve("first"), "shared");
        Files.createLink(tree.resolve("second"), first);
        ObjectKey key = ObjectKey.of("hardlinks");
        archives.putTree(key, tree);
        Path target = restoreDir.resolve("tree");

        archives.getTree(key, target);

        assertThat(Files.readString(target.resolve("second"))).isEqualTo("shared");
        assertThat(Files.isSameFile(target.resolve("first"), target.resolve("second")))
                .isFalse();
    }

    @Test
    void aTreeWithASocketIsNotPacked() throws Exception {
        Path tree = Files.createDirectory(scratch.resolve("tree"));
        try (ServerSocketChannel socket = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            socket.bind(UnixDomainSocketAddress.of(tree.resolve("agent.sock")));
            assertThatThrownBy(() -> archives.putTree(ObjectKey.of("socket"), tree))
                    .isInstanceOf(ObjectStoreException.Failed.class)
                    .hasMessageContaining("agent.sock");
        }
        assertThat(store.stat(ObjectKey.of("socket"))).isEmpty();
    }

    @Test
    void anExistingTargetOrAFileAsTheTreeIsRefused() throws Exception {
        Path tree = Files.createDirectory(scratch.resolve("tree"));
        ObjectKey key = ObjectKey.of("t");
        archives.putTree(key, tree);
        Path existing = Files.createDirectory(restoreDir.resolve("existing"));

        assertThatThrownBy(() -> archives.getTree(key, existing))
                .isInstanceOf(ObjectStoreException.Failed.class)
                .hasMessageContaining("exists");
        assertThatThrownBy(() -> archives.putTree(key, Files.writeString(scratch.resolve("plain"), "")))
                .isInstanceOf(ObjectStoreException.Failed.class)
                .hasMessageContaining("not a directory");
        assertThatThrownBy(() -> archives.getTree(ObjectKey.of("missing"), restoreDir.resolve("m")))
                .isInstanceOf(ObjectStoreException.NotFound.class);
        assertThat(TestContent.names(restoreDir)).containsExactly("existing");
    }

    @Test
    void packingIsDeterministic() throws Exception {
        Path tree = Files.createDirectory(scratch.resolve("tree"));
        Files.writeString(Files.createDirectories(tree.resolve("b/c")).resolve("f"), "1");
        Files.writeString(tree.resolve("a"), "2");
        Files.createSymbolicLink(tree.resolve("l"), Path.of("a"));

        ObjectInfo first = archives.putTree(ObjectKey.of("one"), tree);
        Files.readAllBytes(tree.resolve("a")); // an access does not change the archive
        ObjectInfo second = archives.putTree(ObjectKey.of("two"), tree);

        assertThat(second.sha256()).isEqualTo(first.sha256());
    }
}
