package io.agentenv.backend.container.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class EgressPolicyTest {

    @Test
    void entries_are_kept_in_canonical_form_with_host_bits_cleared() {
        EgressPolicy policy = new EgressPolicy(
                EgressPolicy.Default.DENY, List.of("8.8.8.8", " 1.2.3.4/24 ", "0.0.0.0/0"), List.of("9.9.9.9/32"));

        assertThat(policy.allow()).containsExactly("8.8.8.8", "1.2.3.0/24", "0.0.0.0/0");
        assertThat(policy.deny()).containsExactly("9.9.9.9");
        assertThat(policy.isOpen()).isFalse();
        assertThat(EgressPolicy.OPEN.isOpen()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "example.com",
                "1.2.3",
                "1.2.3.4/33",
                "256.1.1.1",
                "::1",
                "1.2.3.4 } accept; flush ruleset",
                "1.2.3.4/24/8",
                "1.2.3.4;"
            })
    void anything_but_an_ipv4_address_or_block_is_refused_before_it_reaches_nft(String entry) {
        assertThatThrownBy(() -> new EgressPolicy(EgressPolicy.Default.ALLOW, List.of(entry), List.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new EgressPolicy(EgressPolicy.Default.ALLOW, List.of(), List.of(entry)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
