package io.agentenv.volumes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.volumes.content.VolumePath;
import io.agentenv.volumes.storage.DirectoryVolumeStorage;
import io.agentenv.volumes.storage.VolumeStorage;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Optional;
import java.util.Set;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class VolumesTest {
    @TempDir
    Path dir;

    private final InMemoryVolumeStore store = new InMemoryVolumeStore();
    private final VolumeTokens tokens = new VolumeTokens("seed");

    private Volumes volumes(VolumeStorage storage, VolumeUsers users) {
        return new Volumes(
                store,
                storage,
                tokens,
                users,
                new VolumeSettings(64, 128, VolumeSettings.DEFAULT_GUEST_ID_START),
                new VolumeIds(new SecureRandom()),
                Clock.systemUTC(),
                false);
    }

    private Volumes volumes() {
        return volumes(new DirectoryVolumeStorage(dir), VolumeUsers.none());
    }

    @Test
    void createsListsFindsAndDeletes() {
        Volumes volumes = volumes();
        VolumeRecord created = volumes.create("data", Optional.empty());
        assertThat(created.sizeMiB()).isEqualTo(64);
        assertThat(VolumeIds.isValid(created.id())).isTrue();
        assertThat(volumes.list()).containsExactly(created);
        assertThat(volumes.get(created.id())).isEqualTo(created);
        assertThat(dir.resolve(created.id()).resolve("content")).isDirectory();

        volumes.delete(created.id());
        assertThat(volumes.list()).isEmpty();
        assertThat(dir.resolve(created.id())).doesNotExist();
        assertKind(() -> volumes.get(created.id()), VolumeException.Kind.NOT_FOUND);
    }

    @Test
    void duplicateNameIsConflictAndLeavesNoStorage() {
        Volumes volumes = volumes();
        volumes.create("data", Optional.empty());
        assertKind(() -> volumes.create("data", Optional.empty()), VolumeException.Kind.CONFLICT);
        assertThat(dir.toFile().list()).hasSize(1);
    }

    @Test
    void sizeAboveTheMaximumIsInvalid() {
        Volumes volumes = volumes();
        assertKind(() -> volumes.create("big", Optional.of(129)), VolumeException.Kind.INVALID_ARGUMENT);
        assertKind(() -> volumes.create("zero", Optional.of(0)), VolumeException.Kind.INVALID_ARGUMENT);
        assertThat(volumes.create("max", Optional.of(128)).sizeMiB()).isEqualTo(128);
    }

    @Test
    void badNameIsInvalid() {
        assertKind(() -> volumes().create("Bad Name", Optional.empty()), VolumeException.Kind.INVALID_ARGUMENT);
    }

    @Test
    void deleteIsRefusedWhileSandboxesMountTheVolume() {
        Volumes volumes = volumes(new DirectoryVolumeStorage(dir), id -> Set.of("sbx1"));
        VolumeRecord created = volumes.create("data", Optional.empty());
        assertKind(() -> volumes.delete(created.id()), VolumeException.Kind.CONFLICT);
        assertThat(volumes.list()).hasSize(1);
    }

    @Test
    void filesNeedTheVolumesToken() {
        Volumes volumes = volumes();
        VolumeRecord created = volumes.create("data", Optional.empty());
        assertKind(() -> volumes.files(created.id(), Optional.empty()), VolumeException.Kind.UNAUTHENTICATED);
        assertKind(() -> volumes.files(created.id(), Optional.of("nope")), VolumeException.Kind.UNAUTHENTICATED);
        String other = tokens.token("aaaaaaaaaaaaaaaaaaaa");
        assertKind(() -> volumes.files(created.id(), Optional.of(other)), VolumeException.Kind.UNAUTHENTICATED);

        var files = volumes.files(created.id(), Optional.of(volumes.token(created.id())));
        files.write(
                VolumePath.parse("/a.txt"),
                new ByteArrayInputStream("hi".getBytes(StandardCharsets.UTF_8)),
                io.agentenv.volumes.content.VolumeFiles.Metadata.NONE);
        assertThat(dir.resolve(created.id()).resolve("content/a.txt")).hasContent("hi");
    }

    @Test
    void unknownVolumeWithItsTokenIsNotFound() {
        Volumes volumes = volumes();
        String id = "bbbbbbbbbbbbbbbbbbbb";
        assertKind(() -> volumes.files(id, Optional.of(tokens.token(id))), VolumeException.Kind.NOT_FOUND);
    }

    @Test
    void unavailableStorageRefusesWithUnavailable() throws Exception {
        VolumeStorage storage = new VolumeStorage() {
            @Override
            public Path create(String volumeId, int sizeMiB) {
                throw new AssertionError("not called");
            }

            @Override
            public Path content(String volumeId) {
                throw new AssertionError("not called");
            }

            @Override
            public Usage usage(String volumeId) {
                throw new AssertionError("not called");
            }

            @Override
            public void delete(String volumeId) {
                throw new AssertionError("not called");
            }

            @Override
            public void mountAll(java.util.Map<String, Integer> volumes) {
                throw new AssertionError("not called");
            }

            @Override
            public Optional<String> unavailableReason() {
                return Optional.of("no loop devices");
            }
        };
        Volumes volumes = volumes(storage, VolumeUsers.none());
        volumes.start();
        assertThatThrownBy(() -> volumes.create("data", Optional.empty()))
                .isInstanceOf(VolumeException.class)
                .hasMessageContaining("no loop devices");
        assertThat(dir.toFile().list()).isEmpty();
    }

    private static void assertKind(ThrowingCallable call, VolumeException.Kind kind) {
        assertThatThrownBy(call)
                .isInstanceOf(VolumeException.class)
                .extracting(e -> ((VolumeException) e).kind())
                .isEqualTo(kind);
    }
}
