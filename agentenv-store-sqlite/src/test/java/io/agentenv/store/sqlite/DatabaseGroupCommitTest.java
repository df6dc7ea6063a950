package io.agentenv.store.sqlite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.StoreException;
import io.agentenv.store.jdbc.PreparedStatements;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Writers that arrive while another one commits share the next transaction (one fsync), each in its own savepoint. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class DatabaseGroupCommitTest {
    @TempDir
    Path dir;

    private Database db;
    private final ExecutorService writers = Executors.newVirtualThreadPerTaskExecutor();

    @BeforeEach
    void open() {
        db = Database.open(dir.resolve("agentenv.db"));
        db.write("create the test table", c -> {
            try (Statement st = c.connection().createStatement()) {
                st.executeUpdate("CREATE TABLE item (n INTEGER PRIMARY KEY)");
            }
            return null;
        });
    }

    @AfterEach
    void close() {
        writers.shutdownNow();
        db.close();
    }

    @Test
    void writes_queued_behind_a_commit_are_committed_together_in_one_transaction() throws Exception {
        // given a write held inside its transaction
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<Integer> held = writers.submit(() -> db.write("held insert", c -> {
            int n = insert(c, 0);
            inside.countDown();
            awaitQuietly(release);
            return n;
        }));
        assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
        long before = db.commits();

        // when five more writers queue up behind it
        List<Future<Integer>> queued = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            int n = i;
            queued.add(writers.submit(() -> db.write("insert " + n, c -> insert(c, n))));
        }
        await(() -> db.queuedWrites() == 5, "five writes queued");
        release.countDown();

        // then the held one commits alone and the five share the next transaction, each with its own result
        assertThat(held.get(10, TimeUnit.SECONDS)).isEqualTo(1);
        for (Future<Integer> f : queued) {
            assertThat(f.get(10, TimeUnit.SECONDS)).isEqualTo(1);
        }
        assertThat(db.commits() - before).isEqualTo(2);
        assertThat(items()).containsExactly(0, 1, 2, 3, 4, 5);
        assertThat(db.synchronousLevel()).isEqualTo(2);
    }

    @Test
    void a_unit_failing_in_a_shared_transaction_rolls_back_alone_and_its_caller_sees_it() throws Exception {
        // given a write held inside its transaction, and three queued behind it, the middle one failing halfway
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<Integer> held = writers.submit(() -> db.write("held insert", c -> {
            int n = insert(c, 0);
            inside.countDown();
            awaitQuietly(release);
            return n;
        }));
        assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
        Future<Integer> first = writers.submit(() -> db.write("insert 1", c -> insert(c, 1)));
        await(() -> db.queuedWrites() == 1, "the first write queued");
        Future<Integer> failing = writers.submit(() -> db.write("insert 2, then 1 again", c -> {
            insert(c, 2);
            return insert(c, 1); // primary key taken by the first write of the same transaction
        }));
        await(() -> db.queuedWrites() == 2, "the failing write queued");
        Future<Integer> last =
                writers.submit(() -> db.write("insert 3", SandboxStore.Durability.WITH_NEXT_WRITE, c -> insert(c, 3)));
        await(() -> db.queuedWrites() == 3, "the last write queued");

        // when the held one commits
        release.countDown();

        // then the failing unit's caller gets a store error, and nothing of it was written; the others were
        assertThat(held.get(10, TimeUnit.SECONDS)).isEqualTo(1);
        assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(1);
        assertThat(last.get(10, TimeUnit.SECONDS)).isEqualTo(1);
        assertThatThrownBy(() -> failing.get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("insert 2, then 1 again");
        assertThat(items()).containsExactly(0, 1, 3);
        assertThat(db.synchronousLevel()).isEqualTo(2);
    }

    @Test
    void a_lone_write_that_fails_changes_nothing_and_throws_what_its_work_threw() {
        assertThatThrownBy(() -> db.write("insert, then fail", c -> {
                    insert(c, 7);
                    throw new IllegalArgumentException("refused by the work");
                }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("refused by the work");

        assertThat(items()).isEmpty();
    }

    @Test
    void a_virtual_thread_s_write_runs_on_the_store_s_own_platform_thread() throws Exception {
        // SQLite's fsync is a native call: on a virtual thread it would pin one of the carriers every request runs on
        Future<Boolean> virtualInWork = writers.submit(
                () -> db.write("where am I", c -> Thread.currentThread().isVirtual()));

        assertThat(virtualInWork.get(10, TimeUnit.SECONDS)).isFalse();
    }

    @Test
    void a_work_that_throws_an_error_fails_its_caller_and_later_writes_still_commit() throws Exception {
        Future<Integer> broken = writers.submit(() -> db.write("insert, then break", c -> {
            insert(c, 8);
            throw new StackOverflowError("thrown by the work");
        }));
        assertThatThrownBy(() -> broken.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(StackOverflowError.class);

        Future<Integer> next = writers.submit(() -> db.write("insert 9", c -> insert(c, 9)));
        assertThat(next.get(10, TimeUnit.SECONDS)).isEqualTo(1);
        assertThat(items()).containsExactly(9);
    }

    @Test
    void a_write_after_close_fails_with_a_store_error() {
        db.close();

        assertThatThrownBy(() -> db.write("insert after close", c -> insert(c, 1)))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void a_write_cannot_start_inside_another_store_call() {
        assertThatThrownBy(() -> db.write("outer", c -> db.write("inner", inner -> insert(inner, 1))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("inner");

        assertThat(items()).isEmpty();
    }

    /** Through the statement cache: a unit that fails on it leaves it usable for the next one. */
    private static int insert(PreparedStatements c, int n) throws SQLException {
        PreparedStatement st = c.prepared("INSERT INTO item (n) VALUES (?)");
        st.setInt(1, n);
        return st.executeUpdate();
    }

    private List<Integer> items() {
        return db.read("read the items", c -> {
            List<Integer> items = new ArrayList<>();
            try (ResultSet rs = c.prepared("SELECT n FROM item ORDER BY n").executeQuery()) {
                while (rs.next()) {
                    items.add(rs.getInt(1));
                }
            }
            return items;
        });
    }

    /** The work holds the transaction open until the test lets it go (bounded). */
    private static void awaitQuietly(CountDownLatch latch) {
        try {
            if (!latch.await(10, TimeUnit.SECONDS)) {
                throw new AssertionError("not released within 10 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** Waits for a condition with a deadline (no fixed sleeps). */
    private static void await(BooleanSupplier condition, String what) {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(10));
        while (!condition.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("not within 10 s: " + what);
            }
            LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
        }
    }
}
