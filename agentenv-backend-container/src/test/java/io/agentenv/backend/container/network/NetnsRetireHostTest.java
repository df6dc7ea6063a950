package io.agentenv.backend.container.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.host.FreshHostFixture;
import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.host.TestLane;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link NetnsPool#retire}: what pause uses to give its slot back without waiting for the kernel's veth removal. */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class NetnsRetireHostTest {

    private static final Duration SOON = Duration.ofSeconds(10);

    @FreshHostFixture
    private HostFixture host;

    private static boolean vethExists(NetSlot slot) {
        return Files.exists(Path.of("/sys/class/net", slot.hostVeth()));
    }

    /** Waits (bounded) until the slot's host veth is gone; true when it went. */
    private static boolean vethGoneSoon(NetSlot slot) {
        Instant deadline = Instant.now().plus(SOON);
        while (vethExists(slot)) {
            if (Instant.now().isAfter(deadline)) {
                return false;
            }
            LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
        }
        return true;
    }

    @Test
    void a_retired_slot_has_no_netns_or_egress_rules_on_return_and_loses_its_veth_soon() throws Exception {
        // given
        NetSlot slot = host.pool.acquire();
        host.plumb(slot);
        host.firewall.apply(slot, new EgressPolicy(EgressPolicy.Default.DENY, List.of(), List.of()));
        assertThat(host.firewall.chainsFor(slot.hostVeth())).contains("egress-" + slot.hostVeth());

        // when
        host.pool.retire(slot);

        // then
        assertThat(Files.exists(slot.netnsPath())).isFalse();
        assertThat(host.firewall.chainsFor(slot.hostVeth())).doesNotContain("egress-" + slot.hostVeth());
        assertThat(vethGoneSoon(slot))
                .as("veth %s removed within %s", slot.hostVeth(), SOON)
                .isTrue();
    }

    @Test
    void a_retired_slots_index_is_handed_out_again_once_its_veth_is_gone() throws Exception {
        // given: a pool of one slot (in the lane's second half), taken
        try (NetnsPool single = new NetnsPool(
                host.runner, host.firewall, host.layout, host.firstSlot + TestLane.SLOTS_PER_LANE / 2, 1)) {
            NetSlot first = single.acquire();
            host.plumb(first);

            // when
            single.retire(first);

            // then: the index comes back (freed on the retiring thread once the veth is gone)
            NetSlot[] again = new NetSlot[1];
            HostFixture.await("the retired index is handed out again", SOON, () -> {
                try {
                    again[0] = single.acquire();
                    return true;
                } catch (NetnsPool.NoFreeSlotException notYet) {
                    return false;
                }
            });
            assertThat(again[0].index()).isEqualTo(first.index());
            assertThat(vethExists(again[0])).isFalse();
            host.plumb(again[0]);
            assertThat(vethExists(again[0])).isTrue();
            single.release(again[0]);
        }
    }

    @Test
    void closing_the_pool_waits_until_retired_slots_have_lost_their_veth() throws Exception {
        // given
        NetSlot slot = host.pool.acquire();
        host.plumb(slot);
        host.pool.retire(slot);

        // when
        host.pool.close();

        // then
        assertThat(vethExists(slot)).isFalse();
    }
}
