package io.agentenv.store.postgres;

import static io.agentenv.orchestrator.SandboxState.RUNNING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.cluster.NodeId;
import io.agentenv.orchestrator.SandboxRecord;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.SandboxStoreContract;
import io.agentenv.orchestrator.StoreException;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.EnumSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The store contract on PostgreSQL, each open being the node starting (registering again, adopting its rows), and
 * what only this store does: deferred durability as a transaction's {@code synchronous_commit}, the migrated schema.
 */
class PostgresSandboxStoreTest extends SandboxStoreContract {
    private static final NodeId NODE = new NodeId("node-a");
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00.123456789Z");

    private final ClusterPerDirectory clusters = new ClusterPerDirectory();

    @Override
    protected SandboxStore open(Path dir) {
        return clusters.start(dir, NODE);
    }

    @AfterEach
    void dropDatabase() {
        clusters.close();
    }

    private PostgresDatabase db() {
        return clusters.of(dir).db();
    }

    @Test
    void a_next_write_durable_insert_is_read_at_once_and_leaves_commits_synchronous() {
        // given
        SandboxRecord creating = record(SandboxState.CREATING, T0);
        // when
        store.insert(creating, SandboxStore.Durability.WITH_NEXT_WRITE);
        // then: visible, and the setting was the transaction's only
        assertThat(store.get(creating.id())).contains(creating);
        assertThat(synchronousCommit()).isEqualTo("on");
        assertThat(store.replace(creating.withState(RUNNING), EnumSet.of(SandboxState.CREATING)))
                .isTrue();
        store = reopen();
        assertThat(store.get(creating.id()).orElseThrow().state()).isEqualTo(RUNNING);
    }

    @Test
    void a_deferred_insert_that_fails_changes_nothing() {
        // given
        SandboxRecord record = record(RUNNING, T0);
        store.insert(record);
        // when / then: the same id again
        assertThatThrownBy(() ->
                        store.insert(record.withState(SandboxState.PAUSED), SandboxStore.Durability.WITH_NEXT_WRITE))
                .isInstanceOf(StoreException.class);
        assertThat(store.all()).containsExactly(record);
        assertThat(synchronousCommit()).isEqualTo("on");
    }

    @Test
    void the_schema_is_migrated_once_and_a_second_open_finds_it_current() {
        // given a second node's pool on the same database (Flyway ran when the first opened)
        try (PostgresDatabase second = clusters.of(dir).database().open()) {
            // when
            int applied = second.read("count migrations", s -> {
                try (ResultSet rs = s.prepared(
                                "SELECT count(*) FROM flyway_schema_history WHERE success AND version IS NOT NULL")
                        .executeQuery()) {
                    rs.next();
                    return rs.getInt(1);
                }
            });
            // then
            assertThat(applied).isEqualTo(1);
            assertThat(store.all()).isEmpty();
        }
    }

    @Test
    void a_closed_store_refuses_calls() {
        store.close();
        assertThatThrownBy(() -> store.get(record(RUNNING, T0).id()))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("closed");
        store = reopen();
        assertThat(store.all()).isEmpty();
    }

    private String synchronousCommit() {
        return db().read("read synchronous_commit", s -> {
            try (ResultSet rs = s.prepared("SHOW synchronous_commit").executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        });
    }
}
