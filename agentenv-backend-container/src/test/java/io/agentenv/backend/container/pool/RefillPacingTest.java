package io.agentenv.backend.container.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RefillPacingTest {

    private static final long MS = 1_000_000L;
    private static final long T0 = 5_000 * MS;

    private final RefillPacing pacing = new RefillPacing(Duration.ofMillis(100), Duration.ofMillis(500));

    @Test
    void a_pool_nobody_took_from_refills_at_once() {
        assertThat(pacing.delay(T0)).isZero();
    }

    @Test
    void a_single_take_lets_the_refill_start_once_the_burst_gap_has_passed() {
        pacing.taken(T0);

        assertThat(pacing.delay(T0)).isEqualTo(Duration.ofMillis(100));
        assertThat(pacing.delay(T0 + 60 * MS)).isEqualTo(Duration.ofMillis(40));
        assertThat(pacing.delay(T0 + 100 * MS)).isZero();
    }

    @Test
    void takes_within_the_burst_gap_hold_the_refill_until_takes_have_been_quiet() {
        pacing.taken(T0);
        pacing.taken(T0 + 5 * MS);
        pacing.taken(T0 + 90 * MS);

        assertThat(pacing.delay(T0 + 200 * MS)).isEqualTo(Duration.ofMillis(390));
        assertThat(pacing.delay(T0 + 589 * MS)).isEqualTo(Duration.ofMillis(1));
        assertThat(pacing.delay(T0 + 590 * MS)).isZero();
    }

    @Test
    void a_take_long_after_a_burst_counts_as_a_single_take_again() {
        pacing.taken(T0);
        pacing.taken(T0 + 10 * MS);
        pacing.taken(T0 + 2_000 * MS);

        assertThat(pacing.delay(T0 + 2_000 * MS)).isEqualTo(Duration.ofMillis(100));
        assertThat(pacing.delay(T0 + 2_100 * MS)).isZero();
    }

    @Test
    void takes_just_over_the_burst_gap_apart_are_single_takes() {
        pacing.taken(T0);
        pacing.taken(T0 + 101 * MS);

        assertThat(pacing.delay(T0 + 101 * MS)).isEqualTo(Duration.ofMillis(100));
    }

    @Test
    void negative_durations_are_refused() {
        assertThatThrownBy(() -> new RefillPacing(Duration.ofMillis(-1), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
