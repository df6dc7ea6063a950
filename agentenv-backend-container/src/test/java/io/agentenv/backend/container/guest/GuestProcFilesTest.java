package io.agentenv.backend.container.guest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.storage.SandboxDirs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The boot id file of a sandbox dir (the mount over /proc is GuestBootIdHostTest's). */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class GuestProcFilesTest {

    @TempDir
    Path temp;

    @Test
    void a_boot_id_is_written_read_only_as_the_kernel_prints_it_and_read_back() throws IOException {
        SandboxDirs dirs = new SandboxDirs(temp.resolve("sandbox"));
        String first = GuestProcFiles.newBootId();
        String second = GuestProcFiles.newBootId();

        assertThat(GuestProcFiles.bootId(dirs)).isEmpty();
        GuestProcFiles.writeBootId(dirs, first);
        Path file = dirs.procFiles().resolve(GuestProcFiles.BOOT_ID);
        assertThat(file).hasContent(first);
        assertThat(Files.readString(file)).endsWith("\n");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
                .isEqualTo("r--r--r--");
        assertThat(GuestProcFiles.bootId(dirs)).contains(first);

        GuestProcFiles.writeBootId(dirs, second);
        assertThat(second).isNotEqualTo(first);
        assertThat(GuestProcFiles.bootId(dirs)).contains(second);
        try (var left = Files.list(file.getParent())) {
            assertThat(left.toList()).containsExactly(file);
        }
    }

    @Test
    void neither_a_malformed_boot_id_nor_a_symlink_is_taken() throws IOException {
        SandboxDirs dirs = new SandboxDirs(temp.resolve("sandbox"));
        assertThatThrownBy(() -> GuestProcFiles.writeBootId(dirs, "not-a-uuid"))
                .isInstanceOf(IllegalArgumentException.class);

        Path file = dirs.procFiles().resolve(GuestProcFiles.BOOT_ID);
        Files.createDirectories(file.getParent());
        Path elsewhere = Files.writeString(temp.resolve("elsewhere"), GuestProcFiles.newBootId());
        Files.createSymbolicLink(file, elsewhere);
        assertThatThrownBy(() -> GuestProcFiles.bootId(dirs)).isInstanceOf(IOException.class);

        Files.delete(file);
        Files.writeString(file, "garbage\n");
        assertThatThrownBy(() -> GuestProcFiles.bootId(dirs))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("does not hold a boot id");
    }
}
