package io.agentenv.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.agentenv.cluster.FencingToken;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.NodeInfo;
import io.agentenv.cluster.NodeLoad;
import io.agentenv.cluster.NodeRegistry.DeadNode;
import io.agentenv.cluster.NodeState;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** Membership on the node table: epochs, leases on the database's clock, load reports, drains and deaths. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class PostgresNodeRegistryTest {
    private static final NodeId A = new NodeId("node-a");
    private static final NodeId B = new NodeId("node-b");
    private static final URI ADDRESS = URI.create("http://10.0.0.1:8080");
    private static final NodeLoad LOAD =
            new NodeLoad(8, 32_768, 20_000, 1.25, 3, 40, Map.of("base", 2, "python", 1), Set.of("base"), true);

    private TestCluster cluster;
    private PostgresNodeRegistry registry;

    @BeforeEach
    void createDatabase() {
        cluster = TestCluster.create();
        registry = cluster.registry();
    }

    @AfterEach
    void dropDatabase() {
        cluster.close();
    }

    @Test
    void each_registration_is_a_new_epoch_with_a_lease_from_the_databases_clock() {
        // when
        FencingToken first = registry.register(A, ADDRESS, LOAD, Duration.ofSeconds(90));
        NodeInfo registered = registry.find(A).orElseThrow();
        FencingToken second =
                registry.register(A, URI.create("http://10.0.0.2:8080"), NodeLoad.UNKNOWN, Duration.ofSeconds(30));
        // then
        assertThat(first).isEqualTo(new FencingToken(A, 1));
        assertThat(registered.state()).isEqualTo(NodeState.ACTIVE);
        assertThat(registered.address()).isEqualTo(ADDRESS);
        assertThat(registered.load()).isEqualTo(LOAD);
        assertThat(Duration.between(registered.registeredAt(), registered.leaseUntil()))
                .isEqualTo(Duration.ofSeconds(90));
        assertThat(second).isEqualTo(new FencingToken(A, 2));
        NodeInfo again = registry.find(A).orElseThrow();
        assertThat(again.token()).isEqualTo(second);
        assertThat(again.address()).isEqualTo(URI.create("http://10.0.0.2:8080"));
        assertThat(again.load()).isEqualTo(NodeLoad.UNKNOWN);
        assertThat(again.registeredAt()).isAfterOrEqualTo(registered.registeredAt());
        assertThat(registry.find(B)).isEmpty();
    }

    @Test
    void a_renewal_extends_the_lease_and_reports_the_load_unless_the_token_is_stale() {
        // given
        FencingToken first = registry.register(A, ADDRESS, NodeLoad.UNKNOWN, Duration.ofSeconds(1));
        cluster.endLease(A, Duration.ofSeconds(10));
        // when
        boolean renewed = registry.renew(first, LOAD, Duration.ofMinutes(10));
        // then
        assertThat(renewed).isTrue();
        NodeInfo node = registry.find(A).orElseThrow();
        assertThat(node.load()).isEqualTo(LOAD);
        assertThat(node.leaseUntil()).isAfter(node.registeredAt().plus(Duration.ofMinutes(9)));
        assertThat(registry.declareDead(Duration.ZERO, "lease expired")).isEmpty();
        registry.register(A, ADDRESS, NodeLoad.UNKNOWN, Duration.ofMinutes(1));
        assertThat(registry.renew(first, LOAD, Duration.ofMinutes(1)))
                .as("a stale epoch")
                .isFalse();
    }

    @Test
    void a_drain_outlives_a_re_registration_and_a_death_until_ready_clears_it() {
        // given
        registry.register(A, ADDRESS, NodeLoad.UNKNOWN, Duration.ofMinutes(1));
        // when / then
        assertThat(registry.setDraining(A, true)).isTrue();
        assertThat(registry.register(A, ADDRESS, NodeLoad.UNKNOWN, Duration.ofMinutes(1))
                        .epoch())
                .isEqualTo(2);
        assertThat(registry.find(A).orElseThrow().state()).isEqualTo(NodeState.DRAINING);
        assertThat(registry.setDraining(A, false)).isTrue();
        assertThat(registry.find(A).orElseThrow().state()).isEqualTo(NodeState.ACTIVE);
        assertThat(registry.setDraining(B, true)).as("no such node").isFalse();
        registry.setDraining(A, true);
        cluster.endLease(A, Duration.ofMinutes(1));
        assertThat(registry.declareDead(Duration.ZERO, "lease expired"))
                .extracting(DeadNode::node)
                .containsExactly(A);
        assertThat(registry.find(A).orElseThrow().state()).isEqualTo(NodeState.DEAD);
        assertThat(registry.setDraining(A, false)).as("a dead node").isFalse();
        FencingToken back = registry.register(A, ADDRESS, NodeLoad.UNKNOWN, Duration.ofMinutes(1));
        assertThat(back.epoch()).isEqualTo(3);
        assertThat(registry.find(A).orElseThrow().state())
                .as("drained before it died, so drained when it is back")
                .isEqualTo(NodeState.DRAINING);
        assertThat(registry.setDraining(A, false)).isTrue();
        cluster.endLease(A, Duration.ofMinutes(1));
        assertThat(registry.declareDead(Duration.ZERO, "lease expired")).hasSize(1);
        registry.register(A, ADDRESS, NodeLoad.UNKNOWN, Duration.ofMinutes(1));
        assertThat(registry.find(A).orElseThrow().state())
                .as("undrained before it died")
                .isEqualTo(NodeState.ACTIVE);
    }

    @Test
    void a_node_is_declared_dead_only_once_its_lease_ended_more_than_the_grace_ago() {
        // given A's lease ended a minute ago, B's runs
        registry.register(A, ADDRESS, NodeLoad.UNKNOWN, Duration.ofMinutes(1));
        registry.register(B, ADDRESS, NodeLoad.UNKNOWN, Duration.ofMinutes(1));
        cluster.endLease(A, Duration.ofMinutes(1));
        // when / then
        assertThat(registry.declareDead(Duration.ofMinutes(5), "lease expired")).isEmpty();
        assertThat(registry.declareDead(Duration.ofSeconds(30), "lease expired"))
                .containsExactly(new DeadNode(A, 1, List.of(), List.of()));
        assertThat(registry.nodes())
                .extracting(NodeInfo::id, NodeInfo::state)
                .containsExactly(tuple(A, NodeState.DEAD), tuple(B, NodeState.ACTIVE));
    }

    @Test
    void a_lease_must_be_positive_and_a_grace_not_negative() {
        assertThatThrownBy(() -> registry.register(A, ADDRESS, NodeLoad.UNKNOWN, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> registry.declareDead(Duration.ofSeconds(-1), "lease expired"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(registry.nodes()).isEmpty();
    }
}
