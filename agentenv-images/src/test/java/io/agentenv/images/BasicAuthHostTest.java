package io.agentenv.images;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Base64;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A registry with htpasswd (basic) auth: wrong or missing credentials fail, right ones pull, none of them leak. */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class BasicAuthHostTest {

    @RegisterExtension
    static final RegistryExtension REGISTRY = new RegistryExtension(RegistryExtension.Auth.HTPASSWD);

    private static final String WRONG = "wrong-Pa55word-9";

    private final RecordingRunner tools = new RecordingRunner();
    private final RegistryExtension.Log log = new RegistryExtension.Log();

    private ImageRef ref() {
        return ImageRef.parse(REGISTRY.host() + "/" + TestImages.LAYERS);
    }

    @AfterEach
    void no_password_reached_a_command_line_or_the_log() {
        for (String secret : new String[] {RegistryExtension.PASSWORD, WRONG}) {
            String basic = Base64.getEncoder()
                    .encodeToString((RegistryExtension.USER + ":" + secret).getBytes(StandardCharsets.UTF_8));
            assertThat(tools.allArguments()).noneMatch(a -> a.contains(secret) || a.contains(basic));
            assertThat(log.all()).doesNotContain(secret).doesNotContain(basic);
        }
        assertThat(tools.calls()).isNotEmpty();
    }

    @Test
    void without_credentials_the_pull_fails_with_auth_failed() throws Exception {
        ImageStore store = REGISTRY.store("anonymous", RegistrySettings.defaults(), tools);

        assertThatThrownBy(() -> store.pull(ref(), Optional.empty(), log))
                .isInstanceOf(ImageException.AuthFailed.class)
                .hasMessageContaining("unauthorized");
    }

    @Test
    void a_wrong_password_fails_with_auth_failed_and_is_not_in_the_message() throws Exception {
        ImageStore store = REGISTRY.store("wrong", RegistrySettings.defaults(), tools);
        RegistryAuth auth = new RegistryAuth(RegistryExtension.USER, WRONG);

        assertThatThrownBy(() -> store.pull(ref(), Optional.of(auth), log))
                .isInstanceOf(ImageException.AuthFailed.class)
                .message()
                .doesNotContain(WRONG);
        assertThat(tools.allArguments()).anyMatch(a -> a.equals("--authfile"));
        try (Stream<java.nio.file.Path> left = Files.list(store.root().resolve("tmp"))) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void the_right_password_pulls_and_its_auth_file_is_deleted() throws Exception {
        ImageStore store = REGISTRY.store("right", RegistrySettings.defaults(), tools);
        RegistryAuth auth = new RegistryAuth(RegistryExtension.USER, RegistryExtension.PASSWORD);

        PulledImage image = store.pull(ref(), Optional.of(auth), log);

        assertThat(image.rootfs().resolve("etc/keep")).hasContent("kept");
        assertThat(log.all()).contains("as " + RegistryExtension.USER);
        try (Stream<java.nio.file.Path> left = Files.list(store.root().resolve("tmp"))) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void default_credentials_of_the_settings_are_used_when_a_pull_has_none() throws Exception {
        RegistrySettings settings = RegistrySettings.defaults()
                .withCredentials(REGISTRY.host(), new RegistryAuth(RegistryExtension.USER, RegistryExtension.PASSWORD));
        ImageStore store = REGISTRY.store("defaults", settings, tools);

        PulledImage image = store.pull(ref(), Optional.empty(), log);

        assertThat(image.config().workingDir()).contains("/data");
    }
}
