package io.agentenv.backend.container.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.backend.container.host.HostLayout;
import io.agentenv.backend.container.host.RecordingProcessRunner;
import io.agentenv.backend.container.host.SlotAddressing;
import java.nio.file.Path;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** Slot bookkeeping and the ip commands of the pool, against a recording fake runner (no host changes). */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class NetnsPoolTest {

    private final RecordingProcessRunner runner = new RecordingProcessRunner();
    private final HostLayout layout = new HostLayout(
            Path.of("/cache"),
            Path.of("/usr/sbin/runc"),
            Path.of("/cache/criu/sbin/criu"),
            Path.of("/cache/criu-runc.conf"),
            Path.of("/cache/templates"),
            Path.of("/cache/resolv.conf"),
            SlotAddressing.parse("10.200.0.0/16"),
            "aenvq",
            "agentenv",
            Path.of("/sys/fs/cgroup"),
            true,
            Path.of("/run/agentenv"));

    private NetnsPool pool(int first, int count) {
        return new NetnsPool(runner, new EgressFirewall(runner), layout, first, count);
    }

    @Test
    void a_slot_is_names_and_a_slash_30_and_acquiring_one_runs_nothing() throws Exception {
        NetSlot slot = pool(5, 2).acquire();

        assertThat(slot.netnsName()).isEqualTo("aenvq-n5");
        assertThat(slot.hostVeth()).isEqualTo("aenvqv5");
        assertThat(slot.netnsPath()).isEqualTo(Path.of("/run/netns/aenvq-n5"));
        assertThat(slot.hostAddress()).isEqualTo("10.200.0.21");
        assertThat(slot.sandboxAddress()).isEqualTo("10.200.0.22");
        assertThat(runner.commands()).isEmpty(); // the sandbox's runtime hook makes the network
    }

    @Test
    void an_exhausted_pool_refuses_with_a_typed_error_until_a_slot_is_released() throws Exception {
        NetnsPool pool = pool(0, 2);
        NetSlot first = pool.acquire();
        NetSlot second = pool.acquire();

        assertThatThrownBy(pool::acquire)
                .isInstanceOf(NetnsPool.NoFreeSlotException.class)
                .hasMessageContaining("all 2");

        pool.release(first);
        NetSlot again = pool.acquire();
        assertThat(again.index()).isEqualTo(first.index());
        assertThat(again.index()).isNotEqualTo(second.index());
    }

    @Test
    void a_pool_must_fit_the_address_range() {
        assertThatThrownBy(() -> pool(16_380, 8)).hasMessageContaining("do not fit");
    }
}
