package io.agentenv.server.credentials;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SandboxTokensTest {
    // test vectors from the upstream implementation (agentenv-study.md §2.1)
    private static final String SEED = "test-seed";
    private static final String ID = "01936f8e-72f5-7000-8000-000000000001";

    private final SandboxTokens tokens = new SandboxTokens(SEED);

    @Test
    void the_envd_token_matches_the_upstream_test_vector() {
        String token = tokens.envdAccessToken(ID);
        assertThat(token).startsWith("4f00f2a9").endsWith("fae1a7").hasSize(64).matches("[0-9a-f]{64}");
    }

    @Test
    void the_traffic_token_matches_the_upstream_test_vector() {
        String token = tokens.trafficAccessToken(ID);
        assertThat(token).startsWith("586547d7").endsWith("293bd8").hasSize(64).matches("[0-9a-f]{64}");
    }

    @Test
    void tokens_differ_per_sandbox_and_per_seed() {
        assertThat(tokens.envdAccessToken("aaaaaaaaaaaaaaaaaaaa")).isNotEqualTo(tokens.envdAccessToken("aaaaaaaaaaaaaaaaaaab"));
        assertThat(new SandboxTokens("other-seed").envdAccessToken(ID)).isNotEqualTo(tokens.envdAccessToken(ID));
        assertThat(tokens.toString()).doesNotContain(SEED);
    }
}
