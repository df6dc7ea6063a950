package io.agentenv.backend.container.pool;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class RecentKeysTest {
    private static final Instant T0 = Instant.parse("2026-12-02T00:00:00Z");
    private final RecentKeys<String> keys = new RecentKeys<>(2, Duration.ofSeconds(30));

    @Test
    void keys_are_held_up_to_the_capacity_and_a_held_key_stays() {
        assertThat(keys.use("a", T0)).isEqualTo(new RecentKeys.Use<>(true, Optional.empty()));
        assertThat(keys.use("b", T0)).isEqualTo(new RecentKeys.Use<String>(true, Optional.empty()));
        assertThat(keys.use("a", T0.plusSeconds(100))).isEqualTo(new RecentKeys.Use<String>(true, Optional.empty()));
        assertThat(keys.holds("a")).isTrue();
        assertThat(keys.holds("b")).isTrue();
    }

    @Test
    void a_new_key_takes_the_place_of_the_least_recently_used_once_that_is_idle() {
        keys.use("a", T0);
        keys.use("b", T0.plusSeconds(1));
        keys.use("a", T0.plusSeconds(2)); // b is now the least recently used

        assertThat(keys.use("c", T0.plusSeconds(20)))
                .as("b was used 19 s ago: not idle long enough")
                .isEqualTo(new RecentKeys.Use<String>(false, Optional.empty()));
        assertThat(keys.use("c", T0.plusSeconds(31))).isEqualTo(new RecentKeys.Use<>(true, Optional.of("b")));

        assertThat(keys.holds("b")).isFalse();
        assertThat(keys.holds("a")).isTrue();
        assertThat(keys.holds("c")).isTrue();
    }

    @Test
    void a_forgotten_key_frees_its_place_and_no_capacity_holds_nothing() {
        keys.use("a", T0);
        keys.use("b", T0);
        assertThat(keys.forget("a")).isTrue();
        assertThat(keys.forget("a")).isFalse();

        assertThat(keys.use("c", T0)).isEqualTo(new RecentKeys.Use<String>(true, Optional.empty()));

        RecentKeys<String> none = new RecentKeys<>(0, Duration.ZERO);
        assertThat(none.use("a", T0).held()).isFalse();
    }
}
