package io.agentenv.backend.container.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class MountTableTest {

    @Test
    void octal_escapes_of_mountinfo_are_decoded() {
        assertThat(MountTable.unescape("/var/tmp/with\\040space")).isEqualTo("/var/tmp/with space");
        assertThat(MountTable.unescape("/a\\134b")).isEqualTo("/a\\b");
        assertThat(MountTable.unescape("/plain")).isEqualTo("/plain");
        assertThat(MountTable.unescape("/trailing\\04")).isEqualTo("/trailing\\04");
    }

    @Test
    void the_root_filesystem_is_a_mount_point_and_lists_under_itself() throws Exception {
        assertThat(MountTable.isMountPoint(Path.of("/"))).isTrue();
        assertThat(MountTable.mountsUnder(Path.of("/"))).contains(Path.of("/"));
        assertThat(MountTable.mountsUnder(Path.of("/"))).last().isEqualTo(Path.of("/"));
    }
}
