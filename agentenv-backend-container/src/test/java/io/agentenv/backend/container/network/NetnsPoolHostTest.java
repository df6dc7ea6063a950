package io.agentenv.backend.container.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.host.Command;
import io.agentenv.backend.container.host.FreshHostFixture;
import io.agentenv.backend.container.host.HostFixture;
import io.agentenv.backend.container.host.TestLane;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The network namespace pool on this host, and the isolation the host setup's nftables table gives its slots. */
@Tag("host")
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class NetnsPoolHostTest {

    /** Prints "connected" or "blocked": a TCP connect with a short timeout, run inside a netns with the host's python3. */
    private static final String CONNECT = String.join(
            "\n",
            "import socket, sys",
            "try:",
            "    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1).close()",
            "    print('connected')",
            "except OSError:",
            "    print('blocked')");
    /** Sends one DNS query (root NS) and prints "answered" when any reply comes back. */
    private static final String DNS = String.join(
            "\n",
            "import socket, sys",
            "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)",
            "result = 'silent'",
            "for attempt in range(3):",
            "    s.sendto(bytes.fromhex('abcd010000010000000000000000020001'), (sys.argv[1], 53))",
            "    try:",
            "        result = 'answered' if s.recvfrom(512)[0][:2] == b'\\xab\\xcd' else 'garbled'",
            "        break",
            "    except OSError:",
            "        pass",
            "print(result)");

    @FreshHostFixture
    private HostFixture host;

    private String inNetns(NetSlot slot, String code, String... args) throws Exception {
        List<String> argv = new ArrayList<>(List.of("ip", "netns", "exec", slot.netnsName(), "python3", "-c", code));
        argv.addAll(List.of(args));
        return host.runner
                .run(Command.of(Duration.ofSeconds(20), argv))
                .stdout()
                .strip();
    }

    @Test
    void a_plumbed_slot_is_a_netns_with_eth0_in_its_slash_30_and_a_default_route() throws Exception {
        // when
        NetSlot slot = host.pool.acquire();
        host.plumb(slot); // what a sandbox's runtime hook does

        // then
        assertThat(Files.exists(slot.netnsPath())).isTrue();
        assertThat(Files.exists(Path.of("/sys/class/net", slot.hostVeth()))).isTrue();
        // the firewall is IPv4: the host end has no IPv6 address and drops IPv6
        assertThat(Files.readString(Path.of("/proc/sys/net/ipv6/conf", slot.hostVeth(), "disable_ipv6"))
                        .strip())
                .isEqualTo("1");
        String hostEnd = host.runner
                .run(Command.of(Duration.ofSeconds(10), "ip", "-6", "-o", "addr", "show", "dev", slot.hostVeth()))
                .stdout();
        assertThat(hostEnd).isBlank();
        String inside = host.runner
                .run(Command.of(
                        Duration.ofSeconds(10), "ip", "-n", slot.netnsName(), "-4", "-o", "addr", "show", "eth0"))
                .stdout();
        assertThat(inside).contains(slot.sandboxAddress() + "/30");
        String routes = host.runner
                .run(Command.of(Duration.ofSeconds(10), "ip", "-n", slot.netnsName(), "route"))
                .stdout();
        assertThat(routes).contains("default via " + slot.hostAddress());

        // when
        host.pool.release(slot);

        // then
        assertThat(Files.exists(slot.netnsPath())).isFalse();
        assertThat(Files.exists(Path.of("/sys/class/net", slot.hostVeth()))).isFalse();
    }

    @Test
    void a_slot_plumbed_again_for_a_new_namespace_replaces_the_pair_and_the_pin() throws Exception {
        // given a slot plumbed for one namespace (a warm member booted afresh in the same slot plumbs it again)
        NetSlot slot = host.pool.acquire();
        host.plumb(slot);
        String before = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString();
        try {
            // when
            host.plumb(slot);

            // then the pin is a namespace with the slot's eth0, address and route, reached from the host
            String inside = host.runner
                    .run(Command.of(
                            Duration.ofSeconds(10), "ip", "-n", slot.netnsName(), "-4", "-o", "addr", "show", "eth0"))
                    .stdout();
            assertThat(inside).contains(slot.sandboxAddress() + "/30");
            assertThat(host.runner
                            .run(Command.of(Duration.ofSeconds(10), "ip", "-n", slot.netnsName(), "route"))
                            .stdout())
                    .contains("default via " + slot.hostAddress());
            assertThat(Files.readString(Path.of("/proc/sys/net/ipv6/conf", slot.hostVeth(), "disable_ipv6"))
                            .strip())
                    .isEqualTo("1");
            // the new pair is connected: both ends up with a carrier
            assertThat(host.runner
                            .run(Command.of(Duration.ofSeconds(10), "ip", "-o", "link", "show", slot.hostVeth()))
                            .stdout())
                    .contains("LOWER_UP");
            assertThat(host.runner
                            .run(Command.of(
                                    Duration.ofSeconds(10), "ip", "-n", slot.netnsName(), "-o", "link", "show", "eth0"))
                            .stdout())
                    .contains("LOWER_UP");
            assertThat(Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString())
                    .isEqualTo(before);
        } finally {
            host.pool.release(slot);
        }
        assertThat(host.pool.existingNames()).isEmpty();
    }

    @Test
    void concurrent_acquires_never_get_the_same_slot() throws Exception {
        // when
        List<NetSlot> slots = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<NetSlot>> acquired = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                acquired.add(threads.submit(host.pool::acquire));
            }
            for (Future<NetSlot> f : acquired) {
                slots.add(f.get(30, TimeUnit.SECONDS));
            }
        }

        // then
        Set<Integer> indexes = new HashSet<>();
        Set<String> addresses = new HashSet<>();
        slots.forEach(s -> {
            indexes.add(s.index());
            addresses.add(s.sandboxAddress());
        });
        assertThat(indexes).hasSize(6);
        assertThat(addresses).hasSize(6);
        for (NetSlot slot : slots) {
            host.pool.release(slot);
        }
    }

    @Test
    void a_sandbox_reaches_no_other_sandbox_nor_host_service_but_the_host_reaches_it() throws Exception {
        NetSlot a = host.pool.acquire();
        NetSlot b = host.pool.acquire();
        host.plumb(a);
        host.plumb(b);
        Process listener = new ProcessBuilder(
                        "ip",
                        "netns",
                        "exec",
                        b.netnsName(),
                        "python3",
                        "-c",
                        "import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1);"
                                + " s.bind(('0.0.0.0', 8080)); s.listen(); print('ready', flush=True)\nwhile True: s.accept()[0].close()")
                .redirectErrorStream(true)
                .start();
        try (ServerSocket hostService = new ServerSocket(0, 50, InetAddress.getByName("0.0.0.0"))) {
            assertThat(new String(listener.getInputStream().readNBytes(6), StandardCharsets.UTF_8))
                    .isEqualTo("ready\n");

            // the host reaches a sandbox
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(b.sandboxAddress(), 8080), 2000);
                assertThat(s.isConnected()).isTrue();
            }
            // a sandbox does not reach another sandbox
            assertThat(inNetns(a, CONNECT, b.sandboxAddress(), "8080")).isEqualTo("blocked");
            // a sandbox does not reach a service of the host, neither on its gateway address nor on another's
            String port = Integer.toString(hostService.getLocalPort());
            assertThat(inNetns(a, CONNECT, a.hostAddress(), port)).isEqualTo("blocked");
            assertThat(inNetns(a, CONNECT, b.hostAddress(), port)).isEqualTo("blocked");
            // while the same service answers from the host itself
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(a.hostAddress(), hostService.getLocalPort()), 2000);
                assertThat(s.isConnected()).isTrue();
            }
        } finally {
            listener.destroyForcibly().waitFor();
            host.pool.release(a);
            host.pool.release(b);
        }
    }

    @Test
    void a_sandbox_resolves_names_through_the_hosts_resolver_via_nat() throws Exception {
        List<String> resolvers = Files.readAllLines(host.layout.resolvConf()).stream()
                .filter(l -> l.startsWith("nameserver "))
                .map(l -> l.substring("nameserver ".length()).strip())
                .toList();
        Assumptions.assumeFalse(resolvers.isEmpty(), "the host has no resolver a sandbox can reach (see resolv.conf)");
        NetSlot slot = host.pool.acquire();
        host.plumb(slot);
        try {
            assertThat(inNetns(slot, DNS, resolvers.getFirst())).isEqualTo("answered");
        } finally {
            host.pool.release(slot);
        }
    }

    @Test
    void leftovers_of_a_crashed_run_are_found_by_prefix_and_removed() throws Exception {
        // given a slot created by a pool that then vanished without releasing it
        NetnsPool crashed =
                new NetnsPool(host.runner, host.firewall, host.layout, host.firstSlot + TestLane.SLOTS_PER_LANE / 2, 4);
        NetSlot orphan = crashed.acquire();
        host.plumb(orphan);
        host.firewall.apply(orphan, new EgressPolicy(EgressPolicy.Default.DENY, List.of(), List.of()));
        assertThat(host.pool.existingResources())
                .contains(orphan.netnsName(), orphan.hostVeth(), "egress-" + orphan.hostVeth());

        // when
        List<String> removed = host.pool.reapLeftovers();

        // then
        assertThat(removed).contains(orphan.netnsName(), orphan.hostVeth(), "egress-" + orphan.hostVeth());
        assertThat(host.pool.existingResources()).isEmpty();
        assertThat(Files.exists(orphan.netnsPath())).isFalse();
    }
}
