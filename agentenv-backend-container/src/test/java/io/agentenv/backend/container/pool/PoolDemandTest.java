package io.agentenv.backend.container.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class PoolDemandTest {

    private static final long MS = 1_000_000L;
    private final PoolDemand<String> demand = new PoolDemand<>(Duration.ofSeconds(1), Duration.ofMinutes(10), 2, 30);

    private void burst(String key, long at, int takes) {
        for (int i = 0; i < takes; i++) {
            demand.taken(key, at + i * MS); // a burst's creates arrive a few ms apart
        }
    }

    @Test
    void without_demand_the_target_is_the_floor() {
        assertThat(demand.target("base", 0)).isEqualTo(2);
        demand.taken("base", 0);
        assertThat(demand.target("base", 5 * MS)).isEqualTo(2);
    }

    @Test
    void a_burst_raises_its_key_to_its_size_for_the_memory_then_falls_back() {
        long start = 1_000 * MS;
        burst("base", start, 20);
        assertThat(demand.target("base", start + 100 * MS)).isEqualTo(20);
        assertThat(demand.target("other", start + 100 * MS)).isEqualTo(2);
        assertThat(demand.target("base", start + Duration.ofMinutes(9).toNanos()))
                .isEqualTo(20);
        assertThat(demand.target("base", start + Duration.ofMinutes(11).toNanos()))
                .isEqualTo(2);
    }

    @Test
    void takes_spread_wider_than_the_window_are_not_one_burst() {
        for (int i = 0; i < 10; i++) {
            demand.taken("base", i * 1_500L * MS); // one create every 1.5 s
        }
        assertThat(demand.target("base", 15_000 * MS)).isEqualTo(2);
    }

    @Test
    void a_smaller_later_burst_takes_over_once_the_larger_one_is_forgotten() {
        burst("base", 0, 25);
        burst("base", Duration.ofMinutes(5).toNanos(), 8);
        assertThat(demand.target("base", Duration.ofMinutes(6).toNanos())).isEqualTo(25);
        assertThat(demand.target("base", Duration.ofMinutes(12).toNanos())).isEqualTo(8);
        assertThat(demand.target("base", Duration.ofMinutes(16).toNanos())).isEqualTo(2);
    }

    @Test
    void the_ceiling_bounds_the_target_and_forget_drops_the_history() {
        burst("base", 0, 50);
        assertThat(demand.target("base", 100 * MS)).isEqualTo(30);
        demand.forget("base");
        assertThat(demand.target("base", 100 * MS)).isEqualTo(2);
    }

    @Test
    void bad_bounds_are_refused() {
        assertThatThrownBy(() -> new PoolDemand<String>(Duration.ZERO, Duration.ofMinutes(1), 2, 4))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new PoolDemand<String>(Duration.ofSeconds(1), Duration.ofMinutes(1), 5, 4))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
