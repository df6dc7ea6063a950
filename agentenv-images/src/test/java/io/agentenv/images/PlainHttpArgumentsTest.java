package io.agentenv.images;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** Which registries skopeo is allowed to reach without TLS verification, seen in the command lines it gets. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class PlainHttpArgumentsTest {

    private final List<List<String>> calls = new ArrayList<>();
    private final Path root;

    PlainHttpArgumentsTest() throws Exception {
        root = Files.createTempDirectory("agentenv-images-args-");
    }

    @AfterEach
    void remove_the_store() throws Exception {
        ImageStore.deleteTree(root);
    }

    /** A runner that records the command and answers like a registry that does not know the image. */
    private ImageStore store(RegistrySettings settings) throws Exception {
        return new ImageStore(root, settings, (argv, env, timeout, progress) -> {
            calls.add(argv);
            return new ToolRunner.Result(1, new byte[0], "time=\"t\" level=fatal msg=\"manifest unknown\"", false);
        });
    }

    private String tlsFlag(RegistrySettings settings, String reference) throws Exception {
        ImageStore store = store(settings);
        assertThatThrownBy(() -> store.pull(ImageRef.parse(reference), Optional.empty(), line -> {}))
                .isInstanceOf(ImageException.NotFound.class);
        return calls.getLast().stream()
                .filter(a -> a.startsWith("--tls-verify="))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void other_registries_need_tls_unless_the_operator_lists_them() throws Exception {
        assertThat(tlsFlag(RegistrySettings.defaults(), "127.0.0.1:5000/a:1")).isEqualTo("--tls-verify=false");
        assertThat(tlsFlag(RegistrySettings.defaults(), "registry.lan:5000/a:1"))
                .isEqualTo("--tls-verify=true");
        assertThat(tlsFlag(RegistrySettings.parse("", "registry.lan:5000"), "registry.lan:5000/a:1"))
                .isEqualTo("--tls-verify=false");
        assertThat(tlsFlag(RegistrySettings.parse("docker.io=127.0.0.1:5000", ""), "ubuntu"))
                .isEqualTo("--tls-verify=false");
    }

    @Test
    void anonymous_pulls_ignore_credentials_stored_on_the_host() throws Exception {
        ImageStore store = store(RegistrySettings.defaults());

        assertThatThrownBy(() -> store.pull(ImageRef.parse("quay.io/a/b:1"), Optional.empty(), line -> {}))
                .isInstanceOf(ImageException.class);

        assertThat(calls.getLast()).contains("--no-creds").doesNotContain("--authfile");
        assertThat(calls.getLast().getLast()).isEqualTo("docker://quay.io/a/b:1");
        assertThat(Files.readString(root.resolve("policy.json"), StandardCharsets.UTF_8))
                .contains("insecureAcceptAnything");
    }
}
