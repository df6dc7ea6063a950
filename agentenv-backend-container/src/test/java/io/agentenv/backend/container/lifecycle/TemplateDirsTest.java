package io.agentenv.backend.container.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class TemplateDirsTest {
    @TempDir
    Path dir;

    private TemplateDirs dirs() throws Exception {
        Files.createDirectories(dir.resolve("host/base/0123abcd/rootfs"));
        Files.createSymbolicLink(dir.resolve("host/base/current"), Path.of("0123abcd"));
        return new TemplateDirs(dir.resolve("host"), dir.resolve("work/image-templates"));
    }

    @Test
    void an_image_is_linked_beside_the_hosts_templates_and_told_apart() throws Exception {
        TemplateDirs dirs = dirs();
        Path image = Files.createDirectories(dir.resolve("images/abc/rootfs"));

        assertThat(dirs.linkImage("img-0123", image, "", "image-1")).isTrue();
        assertThat(dirs.linkImage("img-0123", image, "", "image-1"))
                .as("the same rootfs again")
                .isFalse();
        assertThat(dirs.preparation("img-0123")).isEmpty();

        assertThat(dirs.names()).containsExactly("base", "img-0123");
        assertThat(dirs.exists("img-0123")).isTrue();
        assertThat(dirs.isImage("img-0123")).isTrue();
        assertThat(dirs.isImage("base")).isFalse();
        assertThat(dirs.rootfs("img-0123")).isEqualTo(image.toRealPath());
        assertThat(dirs.rootfs("base"))
                .isEqualTo(dir.resolve("host/base/0123abcd/rootfs").toRealPath());
        assertThat(Files.exists(dir.resolve("host/img-0123")))
                .as("nothing in the host's dir")
                .isFalse();
    }

    @Test
    void a_new_rootfs_switches_the_link_and_host_names_and_bad_names_are_refused() throws Exception {
        TemplateDirs dirs = dirs();
        Path first = Files.createDirectories(dir.resolve("images/a/rootfs"));
        Path second = Files.createDirectories(dir.resolve("images/b/rootfs"));
        dirs.linkImage("img-x", first, "", "image-1");

        assertThat(dirs.linkImage("img-x", second, "", "image-2")).isTrue();

        assertThat(dirs.rootfs("img-x")).isEqualTo(second.toRealPath());
        assertThatThrownBy(() -> dirs.linkImage("base", first, "", "image-1")).hasMessageContaining("host");
        assertThatThrownBy(() -> dirs.linkImage("../etc", first, "", "image-1"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(dirs.exists("missing")).isFalse();
        assertThatThrownBy(() -> dirs.rootfs("missing")).hasMessageContaining("has not been built");
    }

    @Test
    void a_new_preparation_of_the_same_rootfs_is_a_new_build_of_the_image() throws Exception {
        TemplateDirs dirs = dirs();
        Path image = Files.createDirectories(dir.resolve("images/abc/rootfs"));
        dirs.linkImage("img-p", image, "echo one\n", "image-1");

        assertThat(dirs.linkImage("img-p", image, "echo two\n", "image-2")).isTrue();

        assertThat(dirs.preparation("img-p")).isEqualTo("echo two\n");
        assertThat(dirs.rootfs("img-p")).isEqualTo(image.toRealPath());
        assertThat(dirs.linkImage("img-p", image, "echo two\n", "image-2"))
                .as("the same build again")
                .isFalse();
        assertThat(dirs.preparation("base"))
                .as("the host's templates have none")
                .isEmpty();
    }
}
