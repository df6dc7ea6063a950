package io.agentenv.images;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A registry with {@code auth: token}: skopeo gets RS256 bearer tokens from {@link TokenServer}, anonymously for
 * {@code public/} repositories and with credentials for the others.
 */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class TokenAuthHostTest {

    @RegisterExtension
    static final RegistryExtension REGISTRY = new RegistryExtension(RegistryExtension.Auth.TOKEN);

    private final RecordingRunner tools = new RecordingRunner();
    private final RegistryExtension.Log log = new RegistryExtension.Log();

    private ImageRef ref(String name) {
        return ImageRef.parse(REGISTRY.host() + "/" + name);
    }

    @AfterEach
    void the_password_reached_no_command_line_and_no_log() {
        assertThat(tools.allArguments()).noneMatch(a -> a.contains(TokenServer.PASSWORD));
        assertThat(log.all()).doesNotContain(TokenServer.PASSWORD);
    }

    @Test
    void an_anonymous_bearer_token_pulls_a_public_repository() throws Exception {
        ImageStore store = REGISTRY.store("public", RegistrySettings.defaults(), tools);
        int before = REGISTRY.tokens().issued();

        PulledImage image = store.pull(ref(TestImages.PUBLIC), Optional.empty(), log);

        assertThat(image.rootfs().resolve("etc/keep")).hasContent("kept");
        assertThat(REGISTRY.tokens().issued()).isGreaterThan(before);
    }

    @Test
    void a_private_repository_without_credentials_fails_with_auth_failed() throws Exception {
        ImageStore store = REGISTRY.store("private-anonymous", RegistrySettings.defaults(), tools);

        assertThatThrownBy(() -> store.pull(ref(TestImages.PRIVATE), Optional.empty(), log))
                .isInstanceOf(ImageException.AuthFailed.class);
    }

    @Test
    void wrong_credentials_are_refused_by_the_token_server() throws Exception {
        ImageStore store = REGISTRY.store("private-wrong", RegistrySettings.defaults(), tools);
        int refused = REGISTRY.tokens().refused();

        assertThatThrownBy(() -> store.pull(
                        ref(TestImages.PRIVATE), Optional.of(new RegistryAuth(TokenServer.USER, "nope-nope")), log))
                .isInstanceOf(ImageException.AuthFailed.class)
                .message()
                .doesNotContain("nope-nope");
        assertThat(REGISTRY.tokens().refused()).isGreaterThan(refused);
    }

    @Test
    void right_credentials_get_a_token_that_pulls_a_private_repository() throws Exception {
        ImageStore store = REGISTRY.store("private-right", RegistrySettings.defaults(), tools);
        RegistryAuth auth = new RegistryAuth(TokenServer.USER, TokenServer.PASSWORD);

        PulledImage image = store.pull(ref(TestImages.PRIVATE), Optional.of(auth), log);

        assertThat(image.config().entrypoint()).containsExactly("/bin/sh");
    }
}
