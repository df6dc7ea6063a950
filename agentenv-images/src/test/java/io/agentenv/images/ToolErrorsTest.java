package io.agentenv.images;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ToolErrorsTest {

    private static String logrus(String msg) {
        return "time=\"2026-01-01T00:00:00Z\" level=fatal msg=\"" + msg.replace("\"", "\\\"") + "\"\n";
    }

    @Test
    void skopeo_messages_are_classified_by_what_the_registry_said() {
        assertThat(ToolErrors.classify("x", "reading manifest 1 in r/a: manifest unknown: manifest unknown"))
                .isInstanceOf(ImageException.NotFound.class);
        assertThat(ToolErrors.classify("x", "reading manifest 1 in r/a: unauthorized: authentication required"))
                .isInstanceOf(ImageException.AuthFailed.class);
        assertThat(ToolErrors.classify("x", "requested access to the resource is denied"))
                .isInstanceOf(ImageException.AuthFailed.class);
        assertThat(ToolErrors.classify(
                        "x", "pinging container registry r: Get \"https://r/v2/\": dial tcp: no such host"))
                .isInstanceOf(ImageException.Unreachable.class);
        assertThat(ToolErrors.classify("x", "http: server gave HTTP response to HTTPS client"))
                .isInstanceOf(ImageException.Unreachable.class);
        assertThat(ToolErrors.classify("x", "no space left on device")).isInstanceOf(ImageException.Failed.class);
        assertThat(ToolErrors.classify("copy a", "").getMessage()).isEqualTo("copy a: no error output");
    }

    @Test
    void logrus_lines_are_reduced_to_their_text_and_secrets_are_replaced() {
        String password = "pa55-w0rd";
        String basic = Base64.getEncoder().encodeToString(("u:" + password).getBytes(StandardCharsets.UTF_8));
        String stderr = logrus("Error \"x\": bad " + password + " and " + basic) + "second line\n";

        String clean = ToolErrors.clean(stderr, List.of(password, "u:" + password));

        assertThat(clean).isEqualTo("Error \"x\": bad *** and ***; second line");
    }

    @Test
    void long_messages_keep_their_end() {
        String clean = ToolErrors.clean("x".repeat(5000) + " the cause", List.of());

        assertThat(clean)
                .hasSize(ToolErrors.MAX_MESSAGE + 3)
                .endsWith(" the cause")
                .startsWith("...");
    }
}
