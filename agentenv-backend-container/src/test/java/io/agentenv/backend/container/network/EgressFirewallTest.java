package io.agentenv.backend.container.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.host.RecordingProcessRunner;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** The nft transactions the egress firewall sends, against a recording fake runner. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class EgressFirewallTest {

    private static final NetSlot SLOT = new NetSlot(7, "aenv-n7", "aenvv7", "10.200.0.29", "10.200.0.30");

    private final RecordingProcessRunner runner = new RecordingProcessRunner();
    private final EgressFirewall firewall = new EgressFirewall(runner);

    private String batch() {
        return new String(runner.last().stdin().orElseThrow(), StandardCharsets.UTF_8);
    }

    @Test
    void a_policy_becomes_one_transaction_allow_before_deny_before_the_default() throws Exception {
        firewall.apply(
                SLOT,
                new EgressPolicy(EgressPolicy.Default.DENY, List.of("8.8.8.8", "1.1.1.0/24"), List.of("8.8.0.0/16")));

        assertThat(runner.commands()).hasSize(1);
        assertThat(runner.last().argv()).containsExactly("nft", "-f", "-");
        assertThat(batch().lines().toList())
                .containsExactly(
                        "add chain ip agentenv egress-aenvv7",
                        "flush chain ip agentenv egress-aenvv7",
                        "add rule ip agentenv egress-aenvv7 ip daddr { 8.8.8.8, 1.1.1.0/24 } accept",
                        "add rule ip agentenv egress-aenvv7 ip daddr { 8.8.0.0/16 } reject with icmp type admin-prohibited",
                        "add rule ip agentenv egress-aenvv7 reject with icmp type admin-prohibited",
                        "add element ip agentenv egress { \"aenvv7\" : jump egress-aenvv7 }");
    }

    @Test
    void an_open_policy_removes_the_chain_and_its_map_entry_even_if_they_never_existed() throws Exception {
        firewall.apply(SLOT, EgressPolicy.OPEN);

        assertThat(batch().lines().toList())
                .containsExactly(
                        "add chain ip agentenv egress-aenvv7",
                        "add element ip agentenv egress { \"aenvv7\" : jump egress-aenvv7 }",
                        "delete element ip agentenv egress { \"aenvv7\" }",
                        "delete chain ip agentenv egress-aenvv7");
    }

    @Test
    void removal_asks_nft_first_and_does_nothing_when_the_slot_has_no_chain() throws Exception {
        runner.succeed(
                "{\"nftables\": [{\"metainfo\": {}}, {\"chain\": {\"family\": \"ip\", \"table\": \"agentenv\", \"name\": \"forward\"}}]}");

        firewall.remove(SLOT);

        assertThat(runner.commands()).hasSize(1);
        assertThat(runner.last().argv()).containsExactly("nft", "-j", "list", "chains", "ip");
    }

    @Test
    void reaping_removes_only_chains_of_the_given_veth_prefix() throws Exception {
        runner.succeed("{\"nftables\": ["
                + "{\"chain\": {\"table\": \"agentenv\", \"name\": \"egress-aenvt0v5\"}},"
                + "{\"chain\": {\"table\": \"agentenv\", \"name\": \"egress-aenvv5\"}},"
                + "{\"chain\": {\"table\": \"other\", \"name\": \"egress-aenvt0v6\"}}]}");

        List<String> reaped = firewall.reap("aenvt0v");

        assertThat(reaped).containsExactly("egress-aenvt0v5");
        assertThat(batch()).contains("delete chain ip agentenv egress-aenvt0v5").doesNotContain("aenvv5");
    }
}
