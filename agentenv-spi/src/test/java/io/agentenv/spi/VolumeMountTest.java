package io.agentenv.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class VolumeMountTest {

    private static VolumeMount at(String path) {
        return new VolumeMount("vol-1", Path.of("/data/volumes/vol-1/content"), path, false);
    }

    @Test
    void a_mount_path_must_be_absolute_normalized_and_not_the_root() {
        assertThat(at("/home/user/data").guestPath()).isEqualTo("/home/user/data");
        for (String bad : List.of("", "/", "data", "/data/", "/a//b", "/a/./b", "/a/../b", "/..", "/a\0b")) {
            assertThatThrownBy(() -> at(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void overlapping_is_the_same_path_or_one_below_the_other_not_a_shared_prefix() {
        assertThat(at("/data").overlaps("/data")).isTrue();
        assertThat(at("/data").overlaps("/data/cache")).isTrue();
        assertThat(at("/data/cache").overlaps("/data")).isTrue();
        assertThat(at("/data").overlaps("/database")).isFalse();
        assertThat(at("/database").overlaps("/data")).isFalse();
    }

    @Test
    void a_launch_refuses_two_volumes_at_overlapping_paths() {
        assertThatThrownBy(() -> new LaunchSpec(
                        SandboxId.random(new java.security.SecureRandom()),
                        new TemplateId("base"),
                        Map.of(),
                        "user",
                        new AccessToken("t"),
                        NetworkPolicy.DEFAULT,
                        Optional.empty(),
                        List.of(at("/data"), at("/data/cache"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("overlap");
    }
}
