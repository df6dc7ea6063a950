package io.agentenv.backend.container.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SlotAddressingTest {

    private final SlotAddressing plan = SlotAddressing.parse("10.200.0.0/16");

    @Test
    void each_slot_owns_a_slash_30_with_the_host_at_dot_1_and_the_sandbox_at_dot_2() {
        assertThat(plan.hostAddress(0)).isEqualTo("10.200.0.1");
        assertThat(plan.sandboxAddress(0)).isEqualTo("10.200.0.2");
        assertThat(plan.hostAddress(1)).isEqualTo("10.200.0.5");
        assertThat(plan.sandboxAddress(1)).isEqualTo("10.200.0.6");
        assertThat(plan.sandboxAddress(64)).isEqualTo("10.200.1.2");
    }

    @Test
    void a_slash_16_holds_16384_slots_and_no_slot_outside_it_exists() {
        assertThat(plan.slotCount()).isEqualTo(16384);
        assertThat(plan.sandboxAddress(16383)).isEqualTo("10.200.255.254");
        assertThatThrownBy(() -> plan.hostAddress(16384)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> plan.hostAddress(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void malformed_or_misaligned_ranges_are_refused() {
        assertThatThrownBy(() -> SlotAddressing.parse("10.200.0.1/16")).hasMessageContaining("aligned");
        assertThatThrownBy(() -> SlotAddressing.parse("10.200.0.0")).hasMessageContaining("CIDR");
        assertThatThrownBy(() -> SlotAddressing.parse("10.300.0.0/16")).hasMessageContaining("CIDR");
        assertThatThrownBy(() -> SlotAddressing.parse("10.200.0.0/30")).hasMessageContaining("/8../28");
        assertThatThrownBy(() -> SlotAddressing.parse("10.200.00.0/16")).hasMessageContaining("CIDR");
    }
}
