package io.agentenv.backend.container.guest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class LxcfsViewsTest {

    @Test
    void each_view_is_the_same_path_below_the_lxcfs_mount() {
        LxcfsViews views = new LxcfsViews(Path.of("/run/agentenv/lxcfs"));

        assertThat(views.binds()).hasSize(LxcfsViews.GUEST_PATHS.size());
        assertThat(views.binds())
                .contains(
                        new LxcfsViews.Bind(Path.of("/run/agentenv/lxcfs/proc/meminfo"), "/proc/meminfo"),
                        new LxcfsViews.Bind(
                                Path.of("/run/agentenv/lxcfs/sys/devices/system/cpu/online"),
                                "/sys/devices/system/cpu/online"));
        assertThatThrownBy(() -> new LxcfsViews(Path.of("lxcfs"))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void a_directory_that_is_no_lxcfs_mount_is_refused_even_with_the_files(@TempDir Path dir) throws Exception {
        LxcfsViews views = new LxcfsViews(dir);
        for (LxcfsViews.Bind bind : views.binds()) {
            Files.createDirectories(bind.hostPath().getParent());
            Files.writeString(bind.hostPath(), "the host's\n"); // plain files would show the host's values
        }

        assertThat(views.unavailableReason())
                .hasValueSatisfying(reason -> assertThat(reason).isEqualTo("LXCFS is not mounted at " + dir));
    }
}
