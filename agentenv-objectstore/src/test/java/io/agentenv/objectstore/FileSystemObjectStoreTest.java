package io.agentenv.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileSystemObjectStoreTest extends ObjectStoreContract {

    @TempDir
    Path root;

    @Override
    protected ObjectStore openStore() throws Exception {
        return new FileSystemObjectStore(root);
    }

    @Override
    protected void damage(ObjectKey key, long offset) throws Exception {
        Bytes.flipBit(fileOf(key), FileSystemObjectStore.HEADER_SIZE + offset);
    }

    private Path fileOf(ObjectKey key) {
        return ((FileSystemObjectStore) store).path(key);
    }

    @Test
    void anObjectIsOneFileWithItsDigestInAHeader() throws Exception {
        ObjectKey key = ObjectKey.of("templates/base/rootfs.tar");
        ObjectInfo info = store.put(key, out -> out.write("content".getBytes(StandardCharsets.UTF_8)));

        Path file = root.resolve("objects/templates/base/rootfs.tar@");
        assertThat(fileOf(key)).isEqualTo(file.toRealPath());
        byte[] bytes = Files.readAllBytes(file);
        assertThat(bytes).hasSize(FileSystemObjectStore.HEADER_SIZE + 7);
        assertThat(new String(bytes, 0, 8, StandardCharsets.US_ASCII)).isEqualTo("AENVOBJ1");
        assertThat(Sha256.hex(Arrays.copyOfRange(bytes, 16, 48))).isEqualTo(info.sha256());
        assertThat(new String(bytes, 48, 7, StandardCharsets.UTF_8)).isEqualTo("content");
        assertThat(TestContent.names(root.resolve("tmp"))).isEmpty();
    }

    /**
     * The suffix keeps object files and directories apart. (S3 allows this too; S3Proxy's filesystem provider, which
     * the S3 tests run on, does not, so it is not part of the contract's tests.)
     */
    @Test
    void aKeyAndKeysBelowItCoexist() throws Exception {
        ObjectKey parent = ObjectKey.of("a/b");
        ObjectKey child = ObjectKey.of("a/b/c");
        store.put(parent, out -> out.write(1));
        store.put(child, out -> out.write(new byte[] {2, 3}));

        assertThat(store.list("a/")).containsExactly(new ObjectEntry(parent, 1), new ObjectEntry(child, 2));
        assertThat(store.delete(parent)).isTrue();
        assertThat(store.stat(child)).map(ObjectInfo::size).contains(2L);
    }

    @Test
    void aHeaderThatDisagreesWithTheFileIsCorrupt() throws Exception {
        ObjectKey key = ObjectKey.of("header");
        store.put(key, TestContent.writer(1, 100));
        Bytes.flipBit(fileOf(key), 15); // the size's lowest byte

        assertThatThrownBy(() -> store.stat(key)).isInstanceOf(ObjectStoreException.Corrupt.class);
        assertThatThrownBy(() -> store.get(key, scratch.resolve("t"))).isInstanceOf(ObjectStoreException.Corrupt.class);

        store.put(key, TestContent.writer(1, 100));
        Bytes.flipBit(fileOf(key), 0); // the magic
        assertThatThrownBy(() -> store.stat(key))
                .isInstanceOf(ObjectStoreException.Corrupt.class)
                .hasMessageContaining("magic");
    }

    @Test
    void deleteRemovesDirectoriesItEmptied() throws Exception {
        store.put(ObjectKey.of("x/y/z"), TestContent.writer(1, 1));
        store.put(ObjectKey.of("x/w"), TestContent.writer(1, 1));

        store.delete(ObjectKey.of("x/y/z"));
        assertThat(TestContent.names(root.resolve("objects/x"))).containsExactly("w@");
        store.delete(ObjectKey.of("x/w"));
        assertThat(TestContent.names(root.resolve("objects"))).isEmpty();
    }

    @Test
    void aLinkInPlaceOfAnObjectFileIsNotFollowed() throws Exception {
        ObjectKey key = ObjectKey.of("linked");
        ObjectKey elsewhere = ObjectKey.of("elsewhere");
        store.put(key, TestContent.writer(1, 10));
        store.put(elsewhere, TestContent.writer(2, 10));
        Files.delete(fileOf(key));
        Files.createSymbolicLink(root.resolve("objects/linked@"), fileOf(elsewhere));

        assertThatThrownBy(() -> store.get(key, scratch.resolve("t"))).isInstanceOf(ObjectStoreException.Failed.class);
        assertThat(scratch.resolve("t")).doesNotExist();
    }

    @Test
    void tempFilesOfCrashedPutsAreRemovedOnceStale() throws Exception {
        Path stale = Files.writeString(root.resolve("tmp/crashed.tmp"), "half");
        Files.setLastModifiedTime(stale, FileTime.from(Instant.now().minus(Duration.ofDays(2))));
        Path recent = Files.writeString(root.resolve("tmp/in-progress-elsewhere.tmp"), "half");

        new FileSystemObjectStore(root).close();

        assertThat(stale).doesNotExist();
        assertThat(recent).exists();
        assertThat(store.list("")).isEmpty();
    }

    @Test
    void aRootThatIsNotThereIsUnavailable() {
        assertThatThrownBy(() -> new FileSystemObjectStore(root.resolve("not-mounted")))
                .isInstanceOf(ObjectStoreException.Unavailable.class);
    }

    @Test
    void aStoreWhoseDirectoriesVanishIsUnavailableAndDoesNotRecreateThem() throws Exception {
        ObjectKey key = ObjectKey.of("a/b");
        store.put(key, TestContent.writer(1, 10));
        // what an unmount looks like from here: the mount point is empty
        Files.move(root.resolve("objects"), scratch.resolve("objects-away"));
        Files.move(root.resolve("tmp"), scratch.resolve("tmp-away"));

        assertThatThrownBy(() -> store.put(key, TestContent.writer(1, 10)))
                .isInstanceOf(ObjectStoreException.Unavailable.class);
        assertThatThrownBy(() -> store.get(key, scratch.resolve("t")))
                .isInstanceOf(ObjectStoreException.Unavailable.class);
        assertThatThrownBy(() -> store.stat(key)).isInstanceOf(ObjectStoreException.Unavailable.class);
        assertThatThrownBy(() -> store.delete(key)).isInstanceOf(ObjectStoreException.Unavailable.class);
        assertThatThrownBy(() -> store.list("")).isInstanceOf(ObjectStoreException.Unavailable.class);
        assertThat(TestContent.names(root)).isEmpty();
    }
}
