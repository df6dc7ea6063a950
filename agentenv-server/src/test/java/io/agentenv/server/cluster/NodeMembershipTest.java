package io.agentenv.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.cluster.FencingToken;
import io.agentenv.cluster.LostSandbox;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.NodeInfo;
import io.agentenv.cluster.NodeLoad;
import io.agentenv.cluster.NodeRegistry;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class NodeMembershipTest {
    private static final NodeId NODE = new NodeId("n1");
    private static final URI ADDRESS = URI.create("http://127.0.0.1:3000");

    /** A registry that counts renewals, refuses them once told to, or fails like an unreachable database. */
    private static final class ScriptedRegistry implements NodeRegistry {
        final AtomicInteger renewals = new AtomicInteger();
        final AtomicBoolean refuse = new AtomicBoolean();
        final AtomicBoolean unreachable = new AtomicBoolean();
        final List<NodeLoad> reported = new CopyOnWriteArrayList<>();
        final List<List<DeadNode>> deaths = new ArrayList<>();

        @Override
        public FencingToken register(NodeId node, URI address, NodeLoad load, Duration ttl) {
            reported.add(load);
            return new FencingToken(node, 7);
        }

        @Override
        public boolean renew(FencingToken token, NodeLoad load, Duration ttl) {
            if (unreachable.get()) {
                throw new IllegalStateException("connection refused");
            }
            renewals.incrementAndGet();
            reported.add(load);
            return !refuse.get();
        }

        @Override
        public List<NodeInfo> nodes() {
            return List.of();
        }

        @Override
        public Optional<NodeInfo> find(NodeId node) {
            return Optional.empty();
        }

        @Override
        public boolean setDraining(NodeId node, boolean draining) {
            return false;
        }

        @Override
        public synchronized List<DeadNode> declareDead(Duration grace, String reason) {
            return deaths.isEmpty() ? List.of() : deaths.removeFirst();
        }
    }

    @Test
    void a_node_registers_renews_with_its_load_and_stops_once_fenced() throws Exception {
        ScriptedRegistry registry = new ScriptedRegistry();
        CountDownLatch fenced = new CountDownLatch(1);
        NodeLoad load = new NodeLoad(2, 1000, 500, 0.5, 1, 10, Map.of("base", 2), java.util.Set.of("base"));
        try (NodeMembership membership =
                NodeMembership.join(registry, NODE, ADDRESS, Duration.ofSeconds(3), load, Clock.systemUTC())) {
            assertThat(membership.token()).isEqualTo(new FencingToken(NODE, 7));
            membership.startRenewing(() -> load, fenced::countDown);
            await(() -> registry.renewals.get() >= 1);
            assertThat(registry.reported).allMatch(load::equals);

            registry.unreachable.set(true); // an outage is retried, not a fence
            int before = registry.renewals.get();
            Thread.sleep(1_200);
            assertThat(fenced.getCount()).isEqualTo(1);
            registry.unreachable.set(false);
            await(() -> registry.renewals.get() > before);

            registry.refuse.set(true);
            assertThat(fenced.await(5, TimeUnit.SECONDS)).isTrue();
            int after = registry.renewals.get();
            Thread.sleep(1_200);
            assertThat(registry.renewals.get()).as("no renewal after the fence").isEqualTo(after);
        }
    }

    @Test
    void the_sweeper_reports_each_lost_sandbox_of_a_dead_node() {
        ScriptedRegistry registry = new ScriptedRegistry();
        LostSandbox lost = new LostSandbox(
                "aaaaaaaaaaaaaaaaaaaa",
                new NodeId("n2"),
                "base",
                "RUNNING",
                Map.of(),
                Optional.of(java.util.UUID.randomUUID()),
                "lease",
                Instant.EPOCH);
        registry.deaths.add(List.of(new NodeRegistry.DeadNode(new NodeId("n2"), 3, List.of(lost), List.of("p1"))));
        List<LostSandbox> reported = new CopyOnWriteArrayList<>();
        try (DeadNodeSweeper sweeper =
                new DeadNodeSweeper(registry, Duration.ofSeconds(20), Duration.ofHours(1), reported::add)) {
            sweeper.sweep();
            sweeper.sweep();
        }
        assertThat(reported).containsExactly(lost);
    }

    private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met in 10 s");
            }
            Thread.sleep(20);
        }
    }
}
