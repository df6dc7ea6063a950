package io.agentenv.volumes.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirectoryVolumeStorageTest {
    private static final int OWNER = 1_000_001_000;
    private static final String ID = "dirtestvolume0000001";

    @TempDir
    Path dir;

    @Test
    void aVolumeIsADirectoryThatKeepsTheServersIdsAndGoesWithItsDelete() throws Exception {
        DirectoryVolumeStorage storage = new DirectoryVolumeStorage(dir.resolve("volumes"));

        Path content = storage.create(ID, 16);
        Files.writeString(content.resolve("a.txt"), "a");

        assertThat(storage.content(ID)).isEqualTo(content);
        assertThat(Files.getAttribute(content, "unix:uid", LinkOption.NOFOLLOW_LINKS))
                .isEqualTo(Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS));
        storage.delete(ID);
        assertThat(dir.resolve("volumes").resolve(ID)).doesNotExist();
    }

    @Test
    void aSharedVolumesContentRootBelongsToTheGuestUserAsALoopVolumesDoes() throws Exception {
        if (!"0".equals(String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid")))) {
            if ("1".equals(System.getenv("AENV_REQUIRE_HOST_TESTS"))) {
                fail("host tests are required but this test needs root (chown)");
            }
            Assumptions.abort("needs root (chown)");
        }
        DirectoryVolumeStorage storage = new DirectoryVolumeStorage(
                dir.resolve("volumes"), Optional.of(new DirectoryVolumeStorage.Owner(OWNER, OWNER)));

        Path content = storage.create(ID, 16);

        assertThat(Files.getAttribute(content, "unix:uid", LinkOption.NOFOLLOW_LINKS))
                .isEqualTo(OWNER);
        assertThat(Files.getAttribute(content, "unix:gid", LinkOption.NOFOLLOW_LINKS))
                .isEqualTo(OWNER);
    }
}
