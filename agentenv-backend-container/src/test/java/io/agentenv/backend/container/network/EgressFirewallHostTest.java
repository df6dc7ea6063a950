package io.agentenv.backend.container.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.FreshHostFixture;
import io.agentenv.backend.container.host.HostFixture;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Per-sandbox egress rules, checked against a stand-in for an internet host: a network namespace behind its own veth
 * with a public-looking address (in 198.51.100.0/24, TEST-NET-2) that runs a TCP listener. Sandbox traffic to it is routed
 * and NAT'd by the host exactly like traffic to the internet.
 */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class EgressFirewallHostTest {

    private static final String CONNECT = String.join(
            "\n",
            "import socket, sys",
            "try:",
            "    socket.create_connection((sys.argv[1], 8080), timeout=2).close()",
            "    print('connected')",
            "except OSError:",
            "    print('blocked')");

    @FreshHostFixture
    private HostFixture host;

    private Process listener;
    /** Per lane, so that concurrent test runs do not collide: a netns, a veth and a /30 inside 198.51.100.0/24. */
    private String outsideNs;

    private String outsideVeth;
    private String outsideHostEnd;
    private String outside;

    @BeforeEach
    void setUp() throws Exception {
        outsideNs = "xegress-" + host.lane();
        outsideVeth = "xegress" + host.lane();
        outsideHostEnd = "198.51.100." + (4 * host.lane() + 1);
        outside = "198.51.100." + (4 * host.lane() + 2);
        removeOutside();
        String setup = String.join(
                "\n",
                "netns add " + outsideNs,
                "link add name " + outsideVeth + " type veth peer name eth0 netns " + outsideNs,
                "addr add " + outsideHostEnd + "/30 dev " + outsideVeth,
                "link set " + outsideVeth + " up",
                "");
        host.runner.run(Command.of(Duration.ofSeconds(10), "ip", "-batch", "-")
                .withStdin(setup.getBytes(StandardCharsets.UTF_8)));
        String inside =
                String.join("\n", "addr add " + outside + "/30 dev eth0", "link set eth0 up", "link set lo up", "");
        host.runner.run(Command.of(Duration.ofSeconds(10), "ip", "-n", outsideNs, "-batch", "-")
                .withStdin(inside.getBytes(StandardCharsets.UTF_8)));
        listener = new ProcessBuilder(
                        "ip",
                        "netns",
                        "exec",
                        outsideNs,
                        "python3",
                        "-c",
                        "import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1);"
                                + " s.bind(('0.0.0.0', 8080)); s.listen(); print('ready', flush=True)\nwhile True: s.accept()[0].close()")
                .redirectErrorStream(true)
                .start();
        assertThat(new String(listener.getInputStream().readNBytes(6), StandardCharsets.UTF_8))
                .isEqualTo("ready\n");
    }

    @AfterEach
    void tearDown() throws Exception {
        if (listener != null) {
            listener.destroyForcibly().waitFor();
        }
        removeOutside();
    }

    /**
     * Deletes the veth first (which takes its peer with it at once), then the netns: a netns is cleaned up by the
     * kernel in the background, so a veth whose peer it holds can outlive {@code ip netns delete} for a moment, and the
     * next test's {@code link add} of the same name failed with "File exists".
     */
    private void removeOutside() throws Exception {
        if (java.nio.file.Files.exists(Path.of("/sys/class/net", outsideVeth))) {
            host.runner.run(Command.of(Duration.ofSeconds(10), "ip", "link", "delete", outsideVeth));
        }
        if (java.nio.file.Files.exists(io.agentenv.backend.container.host.HostLayout.NETNS_DIR.resolve(outsideNs))) {
            host.runner.run(Command.of(Duration.ofSeconds(10), "ip", "netns", "delete", outsideNs));
        }
    }

    private String reach(NetSlot slot) throws Exception {
        return host.runner
                .run(Command.of(
                        Duration.ofSeconds(20),
                        List.of("ip", "netns", "exec", slot.netnsName(), "python3", "-c", CONNECT, outside)))
                .stdout()
                .strip();
    }

    @Test
    void without_rules_a_sandbox_reaches_the_outside_through_nat() throws Exception {
        NetSlot slot = host.pool.acquire();
        host.plumb(slot);

        assertThat(reach(slot)).isEqualTo("connected");
        host.pool.release(slot);
    }

    @Test
    void deny_by_default_blocks_the_outside_unless_allowed_and_allow_wins_over_deny() throws Exception {
        NetSlot slot = host.pool.acquire();
        host.plumb(slot);

        host.firewall.apply(slot, new EgressPolicy(EgressPolicy.Default.DENY, List.of(), List.of()));
        assertThat(reach(slot)).isEqualTo("blocked");

        host.firewall.apply(
                slot, new EgressPolicy(EgressPolicy.Default.DENY, List.of("198.51.100.0/24"), List.of(outside)));
        assertThat(reach(slot)).isEqualTo("connected");

        host.firewall.apply(slot, new EgressPolicy(EgressPolicy.Default.ALLOW, List.of(), List.of(outside)));
        assertThat(reach(slot)).isEqualTo("blocked");

        host.firewall.apply(slot, EgressPolicy.OPEN);
        assertThat(reach(slot)).isEqualTo("connected");
        assertThat(host.firewall.chainsFor(host.pool.vethPrefix())).isEmpty();
        host.pool.release(slot);
    }

    @Test
    void rules_of_one_sandbox_never_touch_another_and_go_away_with_its_slot() throws Exception {
        NetSlot denied = host.pool.acquire();
        host.plumb(denied);
        NetSlot open = host.pool.acquire();
        host.plumb(open);

        host.firewall.apply(denied, new EgressPolicy(EgressPolicy.Default.DENY, List.of(), List.of()));

        assertThat(reach(denied)).isEqualTo("blocked");
        assertThat(reach(open)).isEqualTo("connected");
        assertThat(host.firewall.chainsFor(host.pool.vethPrefix())).containsExactly("egress-" + denied.hostVeth());
        host.pool.release(denied);
        assertThat(host.firewall.chainsFor(host.pool.vethPrefix())).isEmpty();
        host.pool.release(open);
    }
}
