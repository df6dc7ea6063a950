package io.agentenv.images;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ImageRefTest {

    private static final String DIGEST = "sha256:" + "ab".repeat(32);

    @Test
    void a_bare_name_is_a_docker_hub_library_image_at_latest() {
        ImageRef ref = ImageRef.parse("ubuntu");

        assertThat(ref).isEqualTo(new ImageRef("docker.io", "library/ubuntu", Optional.of("latest"), Optional.empty()));
        assertThat(ref.toString()).isEqualTo("docker.io/library/ubuntu:latest");
    }

    @Test
    void names_with_a_dot_colon_or_localhost_first_name_the_registry() {
        assertThat(ImageRef.parse("ubuntu:22.04").toString()).isEqualTo("docker.io/library/ubuntu:22.04");
        assertThat(ImageRef.parse("user/app").toString()).isEqualTo("docker.io/user/app:latest");
        assertThat(ImageRef.parse("index.docker.io/user/app:1").toString()).isEqualTo("docker.io/user/app:1");
        assertThat(ImageRef.parse("localhost:5000/x").toString()).isEqualTo("localhost:5000/x:latest");
        assertThat(ImageRef.parse("localhost/x:1").registry()).isEqualTo("localhost");
        assertThat(ImageRef.parse("ghcr.io/org/team/app:v1.2").repository()).isEqualTo("org/team/app");
        assertThat(ImageRef.parse("[::1]:5000/x:1").registry()).isEqualTo("[::1]:5000");
        assertThat(ImageRef.parse("docker.io/ubuntu").repository()).isEqualTo("library/ubuntu");
    }

    @Test
    void a_digest_pins_the_image_and_keeps_a_tag_given_with_it() {
        ImageRef pinned = ImageRef.parse("ubuntu@" + DIGEST);
        ImageRef both = ImageRef.parse("127.0.0.1:5000/a/b:1@" + DIGEST);

        assertThat(pinned.tag()).isEmpty();
        assertThat(pinned.digest()).contains(DIGEST);
        assertThat(pinned.toString()).isEqualTo("docker.io/library/ubuntu@" + DIGEST);
        assertThat(both.tag()).contains("1");
        assertThat(both.withDigest(DIGEST).toString()).isEqualTo("127.0.0.1:5000/a/b@" + DIGEST);
        assertThat(both.withRegistry("mirror:1").name()).isEqualTo("mirror:1/a/b");
    }

    @Test
    void malformed_references_are_rejected_with_the_reason() {
        assertThatThrownBy(() -> ImageRef.parse("")).hasMessageContaining("empty");
        assertThatThrownBy(() -> ImageRef.parse("Ubuntu")).hasMessageContaining("lowercase");
        assertThatThrownBy(() -> ImageRef.parse("ubuntu:")).hasMessageContaining("invalid tag");
        assertThatThrownBy(() -> ImageRef.parse("ubuntu:bad/tag")).hasMessageContaining("invalid");
        assertThatThrownBy(() -> ImageRef.parse("ubuntu@sha256:abc")).hasMessageContaining("invalid digest");
        assertThatThrownBy(() -> ImageRef.parse("ubuntu @x")).hasMessageContaining("whitespace");
        assertThatThrownBy(() -> ImageRef.parse("a//b")).hasMessageContaining("invalid repository name");
        assertThatThrownBy(() -> ImageRef.parse("-x")).hasMessageContaining("invalid repository name");
        assertThatThrownBy(() -> ImageRef.parse("reg.io:99999x/a")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ImageRef.parse("x/" + "a".repeat(300))).hasMessageContaining("longer than");
    }
}
