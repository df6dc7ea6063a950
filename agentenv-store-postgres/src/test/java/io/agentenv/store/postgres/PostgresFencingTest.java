package io.agentenv.store.postgres;

import static io.agentenv.orchestrator.SandboxState.PAUSED;
import static io.agentenv.orchestrator.SandboxState.PAUSING;
import static io.agentenv.orchestrator.SandboxState.RESUMING;
import static io.agentenv.orchestrator.SandboxState.RUNNING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.cluster.FencingToken;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.NodeLoad;
import io.agentenv.cluster.NodeRegistry.DeadNode;
import io.agentenv.cluster.SandboxOwners.Ownership;
import io.agentenv.orchestrator.SandboxQuery;
import io.agentenv.orchestrator.SandboxRecord;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.orchestrator.SandboxStoreContract;
import io.agentenv.orchestrator.SortOrder;
import io.agentenv.orchestrator.StoreException;
import io.agentenv.spi.SandboxId;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/**
 * Several nodes' stores on one database: who may write which row (epochs, death, take-over of paused sandboxes), what
 * each node's recovery reads, and what declaring a node dead does to its sandboxes.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class PostgresFencingTest {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00.123456789Z");
    private static final NodeId A = new NodeId("node-a");
    private static final NodeId B = new NodeId("node-b");
    private static final Duration LONG_AGO = Duration.ofMinutes(1);

    private TestCluster cluster;
    private PostgresNodeRegistry registry;
    private PostgresSandboxOwners owners;

    @BeforeEach
    void createDatabase() {
        cluster = TestCluster.create();
        registry = cluster.registry();
        owners = new PostgresSandboxOwners(cluster.db());
    }

    @AfterEach
    void dropDatabase() {
        cluster.close();
    }

    @Test
    void a_write_with_a_stale_epoch_is_refused_and_changes_nothing() {
        // given node A's store, then A registered again (a new process) before any store of the new epoch opened
        PostgresSandboxStore first = cluster.start(A);
        SandboxRecord running = record(RUNNING);
        first.insert(running);
        FencingToken second = cluster.register(A);
        // when / then
        assertThat(second.epoch()).isEqualTo(first.token().epoch() + 1);
        assertThatThrownBy(() -> first.transition(running.id(), EnumSet.of(RUNNING), PAUSING))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("fenced");
        assertThatThrownBy(() -> first.updateTtl(running.id(), EnumSet.of(RUNNING), Duration.ZERO, Optional.empty()))
                .isInstanceOf(StoreException.class);
        assertThatThrownBy(() -> first.delete(running.id(), EnumSet.of(PAUSED)))
                .as("nor a take-over")
                .isInstanceOf(StoreException.class);
        assertThatThrownBy(() -> first.insert(record(RUNNING)))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("fenced");
        assertThat(first.get(running.id())).contains(running);
        assertThat(first.list(everything()).items())
                .extracting(SandboxRecord::id)
                .containsExactly(running.id());
    }

    @Test
    void a_restarted_node_adopts_its_rows_and_its_old_store_sees_none() {
        // given
        PostgresSandboxStore before = cluster.start(A);
        SandboxRecord running = record(RUNNING);
        SandboxRecord paused = record(PAUSED);
        before.insert(running);
        before.insert(paused);
        // when A starts again
        PostgresSandboxStore after = cluster.start(A);
        // then
        assertThat(after.all()).containsExactlyInAnyOrder(running, paused);
        assertThat(after.idsIn(RUNNING)).containsExactly(running.id());
        assertThat(before.all()).isEmpty();
        assertThat(after.transition(running.id(), EnumSet.of(RUNNING), PAUSING)).isTrue();
        assertThat(owners.owner(running.id().value())).contains(new Ownership(Optional.of(A), false));
    }

    @Test
    void a_paused_sandbox_released_by_a_dead_node_resumes_on_the_node_that_takes_it_over() {
        // given A's running and paused sandboxes, A's lease long over, A declared dead
        PostgresSandboxStore a = cluster.start(A);
        PostgresSandboxStore b = cluster.start(B);
        UUID instance = UUID.randomUUID();
        SandboxRecord running =
                record(RUNNING).withMetadata(Map.of("team", "x")).withInstanceId(instance);
        SandboxRecord paused = record(PAUSED);
        a.insert(running);
        a.insert(paused);
        cluster.endLease(A, LONG_AGO);
        List<DeadNode> dead = registry.declareDead(Duration.ZERO, "lease expired");
        // when B resumes the released one
        boolean resumed = b.transition(paused.id(), EnumSet.of(PAUSED), RESUMING);
        // then
        assertThat(dead).singleElement().satisfies(node -> {
            assertThat(node.node()).isEqualTo(A);
            assertThat(node.epoch()).isEqualTo(a.token().epoch());
            assertThat(node.lost()).singleElement().satisfies(lost -> {
                assertThat(lost.sandboxId()).isEqualTo(running.id().value());
                assertThat(lost.node()).isEqualTo(A);
                assertThat(lost.templateId()).isEqualTo("base");
                assertThat(lost.state()).isEqualTo("RUNNING");
                assertThat(lost.metadata()).containsEntry("team", "x");
                assertThat(lost.instanceId())
                        .as("for the custom extension's stop hook")
                        .contains(instance);
                assertThat(lost.reason()).isEqualTo("lease expired");
            });
            assertThat(node.released()).containsExactly(paused.id().value());
        });
        assertThat(owners.lost(running.id().value()))
                .contains(dead.getFirst().lost().getFirst());
        assertThat(owners.owner(running.id().value())).isEmpty();
        assertThat(b.get(running.id())).isEmpty();
        assertThat(b.list(query(Map.of("team", "x"))).items()).isEmpty();
        assertThat(resumed).isTrue();
        assertThat(owners.owner(paused.id().value())).contains(new Ownership(Optional.of(B), false));
        assertThat(b.all()).extracting(SandboxRecord::id).containsExactly(paused.id());
        assertThat(b.transition(paused.id(), EnumSet.of(RESUMING), RUNNING))
                .as("B's own now")
                .isTrue();
    }

    @Test
    void the_released_state_is_what_owners_report_before_a_take_over() {
        // given
        PostgresSandboxStore a = cluster.start(A);
        SandboxRecord paused = record(PAUSED);
        a.insert(paused);
        cluster.endLease(A, LONG_AGO);
        // when
        registry.declareDead(Duration.ZERO, "lease expired");
        // then
        assertThat(owners.owner(paused.id().value())).contains(new Ownership(Optional.empty(), true));
        assertThat(owners.lost(paused.id().value())).isEmpty();
        assertThat(owners.owner(SandboxId.random(RANDOM).value())).isEmpty();
    }

    @Test
    void a_draining_nodes_paused_sandboxes_are_taken_over_and_a_live_nodes_are_not() {
        // given two paused sandboxes of A, and B
        PostgresSandboxStore a = cluster.start(A);
        PostgresSandboxStore b = cluster.start(B);
        SandboxRecord resumed = record(PAUSED);
        SandboxRecord deleted = record(PAUSED);
        a.insert(resumed);
        a.insert(deleted);
        // when / then: A is ACTIVE, B takes nothing
        assertThat(b.transition(resumed.id(), EnumSet.of(PAUSED), RESUMING)).isFalse();
        assertThat(b.delete(deleted.id(), EnumSet.of(PAUSED))).isFalse();
        assertThat(b.replace(resumed.withState(RESUMING), EnumSet.of(PAUSED))).isFalse();
        assertThat(owners.owner(resumed.id().value())).contains(new Ownership(Optional.of(A), true));
        // when A drains: B resumes one (with new metadata) and deletes the other
        assertThat(registry.setDraining(A, true)).isTrue();
        SandboxRecord resuming = resumed.withState(RESUMING).withMetadata(Map.of("moved", "yes"));
        assertThat(b.replace(resuming, EnumSet.of(PAUSED))).isTrue();
        assertThat(b.delete(deleted.id(), EnumSet.of(PAUSED))).isTrue();
        // then
        assertThat(owners.owner(resumed.id().value())).contains(new Ownership(Optional.of(B), false));
        assertThat(b.get(resumed.id())).contains(resuming);
        assertThat(b.list(query(Map.of("moved", "yes"))).items())
                .extracting(SandboxRecord::id)
                .containsExactly(resumed.id());
        assertThat(b.get(deleted.id())).isEmpty();
        assertThat(a.all()).isEmpty();
        assertThat(a.transition(resumed.id(), EnumSet.of(RESUMING), RUNNING))
                .as("no longer A's to change")
                .isFalse();
    }

    @Test
    void a_write_that_does_not_accept_only_paused_never_takes_a_row_over() {
        // given A's paused sandbox, A draining
        PostgresSandboxStore a = cluster.start(A);
        PostgresSandboxStore b = cluster.start(B);
        SandboxRecord paused = record(PAUSED);
        a.insert(paused);
        registry.setDraining(A, true);
        // when / then
        assertThat(b.transition(paused.id(), EnumSet.of(PAUSED, RUNNING), RESUMING))
                .isFalse();
        assertThat(b.updateTtl(paused.id(), EnumSet.of(PAUSED, PAUSING), Duration.ZERO, Optional.empty()))
                .isFalse();
        assertThat(owners.owner(paused.id().value())).contains(new Ownership(Optional.of(A), true));
        assertThat(a.transition(paused.id(), EnumSet.of(PAUSED), RESUMING))
                .as("the draining node still resumes its own")
                .isTrue();
    }

    @Test
    void recovery_reads_are_the_nodes_own_and_the_other_reads_are_the_clusters() {
        // given a due and a paused sandbox on each node
        PostgresSandboxStore a = cluster.start(A);
        PostgresSandboxStore b = cluster.start(B);
        SandboxRecord dueA = record(RUNNING).withTtl(Duration.ofSeconds(1), Optional.of(T0.plusSeconds(1)));
        SandboxRecord dueB = record(RUNNING).withTtl(Duration.ofSeconds(1), Optional.of(T0.plusSeconds(1)));
        SandboxRecord pausedA = record(PAUSED);
        a.insert(dueA);
        a.insert(pausedA);
        b.insert(dueB);
        // when / then
        assertThat(a.all()).extracting(SandboxRecord::id).containsExactlyInAnyOrder(dueA.id(), pausedA.id());
        assertThat(a.idsIn(RUNNING)).containsExactly(dueA.id());
        assertThat(a.listExpired(T0.plusSeconds(2))).containsExactly(dueA.id());
        assertThat(b.listExpired(T0.plusSeconds(2))).containsExactly(dueB.id());
        assertThat(a.get(dueB.id())).contains(dueB);
        assertThat(b.list(everything()).items())
                .extracting(SandboxRecord::id)
                .containsExactlyInAnyOrder(dueA.id(), pausedA.id(), dueB.id());
        assertThat(a.transition(dueB.id(), EnumSet.of(RUNNING), PAUSING))
                .as("B's row is not A's to change")
                .isFalse();
        assertThat(b.get(dueB.id())).contains(dueB);
    }

    @Test
    void concurrent_declarations_report_each_death_with_its_sandboxes_once() throws Exception {
        // given four nodes whose leases ended, each with two running and one paused sandbox, and a live node B
        List<NodeId> expired = List.of(new NodeId("n1"), new NodeId("n2"), new NodeId("n3"), new NodeId("n4"));
        Map<NodeId, List<String>> running = new HashMap<>();
        Map<NodeId, List<String>> paused = new HashMap<>();
        for (NodeId node : expired) {
            PostgresSandboxStore store = cluster.start(node);
            List<SandboxRecord> records = List.of(record(RUNNING), record(PAUSING), record(PAUSED));
            records.forEach(store::insert);
            running.put(
                    node,
                    records.subList(0, 2).stream()
                            .map(r -> r.id().value())
                            .sorted()
                            .toList());
            paused.put(node, List.of(records.get(2).id().value()));
            cluster.endLease(node, LONG_AGO);
        }
        cluster.start(B).insert(record(RUNNING));
        // when two callers declare at the same moment
        CountDownLatch go = new CountDownLatch(1);
        List<Future<List<DeadNode>>> calls = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(2)) {
            for (int i = 0; i < 2; i++) {
                calls.add(pool.submit(() -> {
                    go.await();
                    return registry.declareDead(Duration.ZERO, "lease expired");
                }));
            }
            go.countDown();
            List<DeadNode> reported = new ArrayList<>();
            for (Future<List<DeadNode>> call : calls) {
                reported.addAll(call.get(60, TimeUnit.SECONDS));
            }
            // then each node once, with exactly its sandboxes
            assertThat(reported).extracting(DeadNode::node).containsExactlyInAnyOrderElementsOf(expired);
            for (DeadNode node : reported) {
                assertThat(node.lost())
                        .extracting(l -> l.sandboxId())
                        .containsExactlyElementsOf(running.get(node.node()));
                assertThat(node.released()).containsExactlyElementsOf(paused.get(node.node()));
            }
        }
        assertThat(registry.declareDead(Duration.ZERO, "lease expired")).isEmpty();
        assertThat(registry.nodes())
                .extracting(n -> n.id().value() + "=" + n.state())
                .containsExactly("n1=DEAD", "n2=DEAD", "n3=DEAD", "n4=DEAD", "node-b=ACTIVE");
    }

    @Test
    void a_node_declared_dead_cannot_renew_and_its_zombie_writes_are_refused() {
        // given A with a running sandbox, declared dead while it still runs
        PostgresSandboxStore a = cluster.start(A);
        SandboxRecord running = record(RUNNING);
        SandboxRecord paused = record(PAUSED);
        a.insert(running);
        a.insert(paused);
        cluster.endLease(A, LONG_AGO);
        registry.declareDead(Duration.ZERO, "lease expired");
        // when / then
        assertThat(registry.renew(a.token(), NodeLoad.UNKNOWN, TestCluster.LEASE))
                .isFalse();
        assertThatThrownBy(() -> a.insert(record(RUNNING)))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("fenced");
        assertThatThrownBy(() -> a.transition(paused.id(), EnumSet.of(PAUSED), RESUMING))
                .as("nor may it take its released sandbox back")
                .isInstanceOf(StoreException.class);
        assertThatThrownBy(() -> a.delete(running.id(), EnumSet.of(RUNNING))).isInstanceOf(StoreException.class);
        assertThatThrownBy(() -> PostgresSandboxStore.open(cluster.db(), a.token()))
                .isInstanceOf(StoreException.class);
        assertThat(owners.owner(paused.id().value())).contains(new Ownership(Optional.empty(), true));
    }

    @Test
    void the_token_seed_is_one_for_the_cluster_even_when_first_asked_by_two_nodes_at_once() throws Exception {
        PostgresSandboxStore a = cluster.start(A);
        PostgresSandboxStore b = cluster.start(B);
        CountDownLatch go = new CountDownLatch(1);
        try (ExecutorService pool = Executors.newFixedThreadPool(2)) {
            Future<String> seedA = pool.submit(() -> {
                go.await();
                return a.tokenSeed();
            });
            Future<String> seedB = pool.submit(() -> {
                go.await();
                return b.tokenSeed();
            });
            go.countDown();
            assertThat(seedA.get(30, TimeUnit.SECONDS))
                    .matches("[0-9a-f]{64}")
                    .isEqualTo(seedB.get(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void owners_list_the_running_sandboxes_of_every_node_and_read_the_token_seed() {
        PostgresSandboxStore a = cluster.start(A);
        PostgresSandboxStore b = cluster.start(B);
        assertThat(owners.tokenSeed()).as("before any node made it").isEmpty();
        SandboxRecord onA = record(RUNNING);
        SandboxRecord onB = record(RUNNING);
        a.insert(onA);
        b.insert(onB);
        a.insert(record(PAUSED));

        assertThat(owners.running()).containsExactlyInAnyOrder(onA.id().value(), onB.id().value());
        String seed = a.tokenSeed(); // made by the first node that needs it
        assertThat(owners.tokenSeed()).contains(seed);
    }

    private static SandboxQuery everything() {
        return query(Map.of());
    }

    private static SandboxQuery query(Map<String, String> metadata) {
        return new SandboxQuery(
                EnumSet.allOf(SandboxState.class),
                metadata,
                Optional.empty(),
                Optional.empty(),
                SortOrder.ASC,
                100,
                Optional.empty());
    }

    private static SandboxRecord record(SandboxState state) {
        return SandboxStoreContract.record(state, T0);
    }
}
