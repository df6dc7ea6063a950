package io.agentenv.envd.files;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalLong;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class UrlSignatureTest {
    // expected values computed independently: base64(sha256(raw)) without '=' padding
    @Test
    void a_signature_without_expiration_hashes_path_operation_empty_user_and_token() {
        assertThat(UrlSignature.sign("hello.txt", UrlSignature.Operation.READ, "", "tok", OptionalLong.empty()))
                .isEqualTo("v1_dEkXrS/Y6p/Op9rMpEpzXeRJ5bBL0LYkjrRJr9/Zz44");
    }

    @Test
    void a_signature_with_expiration_appends_it_after_the_token() {
        assertThat(UrlSignature.sign(
                        "hello.txt", UrlSignature.Operation.WRITE, "root", "tok", OptionalLong.of(1700000000)))
                .isEqualTo("v1_ZK200b7+m1jAy3L6mhrL1bclFV8UZrmhEIIkMqzXHaM");
    }

    @Test
    void signatures_compare_exactly() {
        assertThat(UrlSignature.matches("v1_abc", "v1_abc")).isTrue();
        assertThat(UrlSignature.matches("v1_abc", "v1_abd")).isFalse();
        assertThat(UrlSignature.matches("v1_abc", "v1_ab")).isFalse();
    }
}
