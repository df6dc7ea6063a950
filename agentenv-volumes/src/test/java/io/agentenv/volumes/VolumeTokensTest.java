package io.agentenv.volumes;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class VolumeTokensTest {
    private final VolumeTokens tokens = new VolumeTokens("seed-1");

    @Test
    void tokenIsStablePerVolumeAndSeed() {
        assertThat(tokens.token("abc")).isEqualTo(new VolumeTokens("seed-1").token("abc"));
        assertThat(tokens.token("abc")).hasSize(64).matches("[0-9a-f]+");
    }

    @Test
    void tokensDifferBetweenVolumesAndSeeds() {
        assertThat(tokens.token("abc")).isNotEqualTo(tokens.token("abd"));
        assertThat(tokens.token("abc")).isNotEqualTo(new VolumeTokens("seed-2").token("abc"));
    }

    @Test
    void matchesOnlyTheVolumesOwnToken() {
        String token = tokens.token("vol1");
        assertThat(tokens.matches("vol1", token)).isTrue();
        assertThat(tokens.matches("vol2", token)).isFalse();
        assertThat(tokens.matches("vol1", token.toUpperCase(java.util.Locale.ROOT)))
                .isFalse();
        assertThat(tokens.matches("vol1", "")).isFalse();
        assertThat(tokens.matches("vol1", null)).isFalse();
    }
}
