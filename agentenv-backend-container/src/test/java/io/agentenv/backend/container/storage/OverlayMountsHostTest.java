package io.agentenv.backend.container.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.host.FreshHostFixture;
import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.host.MountTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** overlayfs as a sandbox root: template lower, snapshot layers above it, a private upper. */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class OverlayMountsHostTest {

    @FreshHostFixture
    private HostFixture host;

    private Path dir;

    @BeforeEach
    void setUp() throws Exception {
        dir = host.sandboxesDir.resolve("overlay");
    }

    @Test
    void changes_land_in_the_upper_dir_and_never_in_the_lower_layers() throws Exception {
        // given
        Path lower = Files.createDirectories(dir.resolve("lower"));
        Files.writeString(lower.resolve("kept"), "template");
        Files.writeString(lower.resolve("deleted"), "template");
        Path merged = dir.resolve("merged");
        host.overlays.mount(List.of(lower), dir.resolve("upper"), dir.resolve("work"), merged);

        // when
        Files.writeString(merged.resolve("new"), "sandbox");
        Files.writeString(merged.resolve("kept"), "changed");
        Files.delete(merged.resolve("deleted"));
        host.overlays.unmount(merged);

        // then
        assertThat(MountTable.isMountPoint(merged)).isFalse();
        assertThat(Files.readString(lower.resolve("kept"))).isEqualTo("template");
        assertThat(Files.exists(lower.resolve("deleted"))).isTrue();
        assertThat(Files.exists(lower.resolve("new"))).isFalse();
        assertThat(Files.readString(dir.resolve("upper/new"))).isEqualTo("sandbox");
        assertThat(Files.readString(dir.resolve("upper/kept"))).isEqualTo("changed");
        PosixFileAttributes whiteout = Files.readAttributes(
                dir.resolve("upper/deleted"), PosixFileAttributes.class, java.nio.file.LinkOption.NOFOLLOW_LINKS);
        assertThat(whiteout.isOther())
                .as("a deletion is a whiteout device in the upper dir")
                .isTrue();
    }

    @Test
    void unmounting_nothing_does_nothing_and_a_busy_mount_is_refused_and_stays() throws Exception {
        Path lower = Files.createDirectories(dir.resolve("lower"));
        Path merged = dir.resolve("merged");
        host.overlays.unmount(merged); // no such path yet
        Files.createDirectories(merged);
        host.overlays.unmount(merged); // a plain dir

        host.overlays.mount(List.of(lower), dir.resolve("upper"), dir.resolve("work"), merged);
        try (var open = Files.newOutputStream(merged.resolve("held-open"))) {
            assertThatThrownBy(() -> host.overlays.unmount(merged)).hasMessageContaining("EBUSY");
            assertThat(MountTable.isMountPoint(merged)).isTrue();
        }
        host.overlays.unmount(merged);
        assertThat(MountTable.isMountPoint(merged)).isFalse();
    }

    @Test
    void the_topmost_lower_layer_wins_so_a_captured_upper_can_sit_over_the_template() throws Exception {
        // given
        Path template = Files.createDirectories(dir.resolve("template"));
        Path layer = Files.createDirectories(dir.resolve("layer"));
        Files.writeString(template.resolve("file"), "template");
        Files.writeString(template.resolve("only-template"), "t");
        Files.writeString(layer.resolve("file"), "layer");
        Path merged = dir.resolve("merged");

        // when
        host.overlays.mount(List.of(layer, template), dir.resolve("upper"), dir.resolve("work"), merged);

        // then
        assertThat(Files.readString(merged.resolve("file"))).isEqualTo("layer");
        assertThat(Files.readString(merged.resolve("only-template"))).isEqualTo("t");
        host.overlays.unmount(merged);
    }

    @Test
    void a_captured_upper_stacks_as_a_layer_with_its_deletions_opaque_dirs_and_owners() throws Exception {
        // given a sandbox-like overlay where a file was deleted, a directory replaced and a user-owned file written
        Path template = Files.createDirectories(dir.resolve("template"));
        Files.writeString(template.resolve("deleted"), "t");
        Files.createDirectories(template.resolve("replaced"));
        Files.writeString(template.resolve("replaced/old"), "t");
        Path merged = dir.resolve("merged");
        host.overlays.mount(List.of(template), dir.resolve("upper"), dir.resolve("work"), merged);
        Files.delete(merged.resolve("deleted"));
        Files.delete(merged.resolve("replaced/old"));
        Files.delete(merged.resolve("replaced"));
        Files.createDirectories(merged.resolve("replaced"));
        Files.writeString(merged.resolve("replaced/new"), "sandbox");
        Files.writeString(merged.resolve("owned"), "user");
        Files.setAttribute(merged.resolve("owned"), "unix:uid", 1000);
        host.overlays.unmount(merged);

        // when its upper is captured and a fresh overlay stacks it over the template
        Path layer = dir.resolve("layers/snap1");
        new LayerCapture(host.runner, java.time.Duration.ofSeconds(60)).capture(dir.resolve("upper"), layer);
        Path copy = dir.resolve("copy");
        host.overlays.mount(List.of(layer, template), dir.resolve("copy-upper"), dir.resolve("copy-work"), copy);

        // then the copy sees exactly the sandbox's view
        assertThat(Files.exists(copy.resolve("deleted"))).isFalse();
        assertThat(Files.exists(copy.resolve("replaced/old"))).isFalse();
        assertThat(Files.readString(copy.resolve("replaced/new"))).isEqualTo("sandbox");
        assertThat(Files.getAttribute(copy.resolve("owned"), "unix:uid")).isEqualTo(1000);
        assertThat(Files.exists(dir.resolve("layers/.snap1.partial"))).isFalse();
        host.overlays.unmount(copy);
        assertThatThrownBy(() -> new LayerCapture(host.runner, java.time.Duration.ofSeconds(60))
                        .capture(dir.resolve("upper"), layer))
                .hasMessageContaining("already exists");
    }

    @Test
    void unmounting_what_is_not_mounted_is_a_no_op_and_unsafe_paths_are_refused() throws Exception {
        host.overlays.unmount(dir.resolve("never-mounted"));

        assertThatThrownBy(() -> host.overlays.mount(
                        List.of(Path.of("/tmp/a:b")), dir.resolve("u"), dir.resolve("w"), dir.resolve("m")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> host.overlays.mount(
                        List.of(Path.of("/tmp/x")), dir.resolve("u,lowerdir=/"), dir.resolve("w"), dir.resolve("m")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> host.overlays.mount(List.of(), dir.resolve("u"), dir.resolve("w"), dir.resolve("m")))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
