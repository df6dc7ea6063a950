package io.agentenv.backend.container.host;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class TextDigestTest {
    @Test
    void is_sha_256_of_the_utf_8_bytes_in_lower_case_hex() {
        assertThat(TextDigest.sha256Hex("abc"))
                .isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assertThat(TextDigest.sha256Hex("")).startsWith("e3b0c44298fc1c14");
        assertThat(TextDigest.sha256Hex("é")).isNotEqualTo(TextDigest.sha256Hex("e"));
    }

    @Test
    void a_prefix_is_the_first_digits_of_the_whole() {
        assertThat(TextDigest.sha256Hex("abc", 16)).isEqualTo("ba7816bf8f01cfea");
        assertThat(TextDigest.sha256Hex("abc", 32))
                .isEqualTo(TextDigest.sha256Hex("abc").substring(0, 32));
    }
}
