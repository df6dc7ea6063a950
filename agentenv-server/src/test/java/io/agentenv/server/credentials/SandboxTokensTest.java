package io.agentenv.server.credentials;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
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
    void tokens_derived_by_many_threads_at_once_are_each_the_one_of_their_sandbox() throws Exception {
        List<String> ids = IntStream.range(0, 64).mapToObj(i -> "sandbox-" + i).toList();
        Map<String, String> expected = new HashMap<>();
        for (String id : ids) {
            expected.put(id, hmacHex(SEED, id));
        }
        CountDownLatch start = new CountDownLatch(1);

        try (ExecutorService threads = Executors.newFixedThreadPool(8)) {
            List<Future<Boolean>> results = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                results.add(threads.submit(() -> {
                    start.await();
                    boolean allMatch = true;
                    for (int round = 0; round < 50; round++) {
                        for (String id : ids) {
                            allMatch &= tokens.envdAccessToken(id).equals(expected.get(id));
                        }
                    }
                    return allMatch;
                }));
            }
            start.countDown();
            for (Future<Boolean> result : results) {
                assertThat(result.get(30, TimeUnit.SECONDS)).isTrue();
            }
        }
    }

    private static String hmacHex(String seed, String subject) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(seed.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        return HexFormat.of().formatHex(mac.doFinal(subject.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void tokens_differ_per_sandbox_and_per_seed() {
        assertThat(tokens.envdAccessToken("aaaaaaaaaaaaaaaaaaaa"))
                .isNotEqualTo(tokens.envdAccessToken("aaaaaaaaaaaaaaaaaaab"));
        assertThat(new SandboxTokens("other-seed").envdAccessToken(ID)).isNotEqualTo(tokens.envdAccessToken(ID));
        assertThat(tokens.toString()).doesNotContain(SEED);
    }
}
