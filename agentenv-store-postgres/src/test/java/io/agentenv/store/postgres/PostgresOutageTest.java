package io.agentenv.store.postgres;

import static io.agentenv.orchestrator.SandboxState.PAUSING;
import static io.agentenv.orchestrator.SandboxState.RUNNING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.cluster.FencingToken;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.NodeLoad;
import io.agentenv.orchestrator.SandboxRecord;
import io.agentenv.orchestrator.SandboxStoreContract;
import io.agentenv.orchestrator.StoreException;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.function.Supplier;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/**
 * The database going away under open stores, on a server of the test's own: calls fail with {@link StoreException}
 * within the settings' limits while it is down, and work again once it is back, on the same store objects.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class PostgresOutageTest {
    private static final NodeId NODE = new NodeId("node-a");
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00.123456789Z");
    /** A connection is waited for at most this long, so a call fails within a few of these. */
    private static final Duration CONNECT = Duration.ofSeconds(2);

    @Test
    void calls_fail_while_the_database_is_down_and_work_again_after_a_stop_and_a_restart() {
        try (PostgresServer server = PostgresServer.launch();
                PostgresServer.TestDatabase database = server.newDatabase();
                PostgresDatabase db = PostgresDatabase.open(new PostgresDatabase.Settings(
                        database.jdbcUrl(), database.user(), database.password(), 4, CONNECT, Duration.ofSeconds(5)))) {
            // given a node's store with a sandbox
            PostgresNodeRegistry registry = new PostgresNodeRegistry(db);
            FencingToken token = registry.register(
                    NODE, URI.create("http://node-a.test:8080"), NodeLoad.UNKNOWN, Duration.ofMinutes(1));
            PostgresSandboxStore store = PostgresSandboxStore.open(db, token);
            SandboxRecord kept = SandboxStoreContract.record(RUNNING, T0);
            SandboxRecord refused = SandboxStoreContract.record(RUNNING, T0);
            store.insert(kept);

            // when the database stops: every kind of call fails, soon
            server.stop();
            failsSoon(() -> store.get(kept.id()));
            failsSoon(() -> store.insert(refused));
            failsSoon(() -> store.transition(kept.id(), EnumSet.of(RUNNING), PAUSING));
            failsSoon(() -> registry.renew(token, NodeLoad.UNKNOWN, Duration.ofMinutes(1)));
            failsSoon(() -> PostgresDatabase.open(database.jdbcUrl(), database.user(), database.password()));

            // then once it is back (and the pool has connected again) the same objects work, and the failed calls
            // changed nothing
            server.start();
            assertThat(soonAgain(() -> store.get(kept.id()))).contains(kept);
            assertThat(store.get(refused.id())).isEmpty();
            assertThat(registry.renew(token, NodeLoad.UNKNOWN, Duration.ofMinutes(1)))
                    .isTrue();
            store.insert(refused);

            // and right after a restart, which ended the pooled connections' sessions under them: a call runs again
            // on a new connection
            server.restart();
            assertThat(store.all()).containsExactlyInAnyOrder(kept, refused);
            assertThat(store.transition(kept.id(), EnumSet.of(RUNNING), PAUSING))
                    .isTrue();
        }
    }

    /**
     * The call's value once it stops failing: after failed attempts the pool connects again with a back-off of up to
     * 5 s, so the first calls after an outage may still fail. A failing call waits for a connection itself (no sleep
     * here).
     */
    private static <T> T soonAgain(Supplier<T> call) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (true) {
            try {
                return call.get();
            } catch (StoreException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
        }
    }

    private static void failsSoon(ThrowingCallable call) {
        long start = System.nanoTime();
        assertThatThrownBy(call).isInstanceOf(StoreException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .as("how long the failing call took")
                .isLessThan(CONNECT.multipliedBy(4));
    }
}
