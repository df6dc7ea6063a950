package io.agentenv.volumes.content;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.volumes.VolumeException;
import java.util.List;
import org.junit.jupiter.api.Test;

class VolumePathTest {
    @Test
    void splitsAbsoluteAndRelativePathsTheSameWay() {
        assertThat(VolumePath.parse("/a/b/c").components()).containsExactly("a", "b", "c");
        assertThat(VolumePath.parse("a/b/c")).isEqualTo(VolumePath.parse("/a/b/c"));
        assertThat(VolumePath.parse("//a/./b//")).isEqualTo(new VolumePath(List.of("a", "b")));
    }

    @Test
    void slashAndEmptyAreTheRoot() {
        assertThat(VolumePath.parse("/").isRoot()).isTrue();
        assertThat(VolumePath.parse("").isRoot()).isTrue();
        assertThat(VolumePath.parse(".").isRoot()).isTrue();
        assertThat(VolumePath.parse("/").toString()).isEqualTo("/");
    }

    @Test
    void refusesDotDotAnywhere() {
        for (String path : List.of("..", "/..", "a/../b", "a/..", "../etc/passwd", "/a/b/../../..")) {
            assertThatThrownBy(() -> VolumePath.parse(path))
                    .as(path)
                    .isInstanceOf(VolumeException.class)
                    .hasMessageContaining("..");
        }
    }

    @Test
    void refusesNulOverlongComponentsAndMissingPath() {
        assertThatThrownBy(() -> VolumePath.parse("a\0b")).isInstanceOf(VolumeException.class);
        assertThatThrownBy(() -> VolumePath.parse("x".repeat(256))).isInstanceOf(VolumeException.class);
        assertThatThrownBy(() -> VolumePath.parse("/a".repeat(2100))).isInstanceOf(VolumeException.class);
        assertThatThrownBy(() -> VolumePath.parse(null)).isInstanceOf(VolumeException.class);
    }

    @Test
    void dotsInsideNamesAreNames() {
        assertThat(VolumePath.parse("/...").components()).containsExactly("...");
        assertThat(VolumePath.parse("/..a/b..").components()).containsExactly("..a", "b..");
    }

    @Test
    void containsIsAboutWholeComponents() {
        assertThat(VolumePath.parse("/a").contains(VolumePath.parse("/a/b"))).isTrue();
        assertThat(VolumePath.parse("/a").contains(VolumePath.parse("/ab"))).isFalse();
    }
}
