package io.agentenv.store.sqlite;

import static io.agentenv.orchestrator.SandboxState.RUNNING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.orchestrator.SandboxRecord;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.SandboxStoreContract;
import io.agentenv.orchestrator.StoreException;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/** The store contract on SQLite, and what only the SQLite store does: deferred durability, the file lock, WAL. */
class SqliteSandboxStoreTest extends SandboxStoreContract {
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00.123456789Z");

    @Override
    protected SandboxStore open(Path dir) {
        return SqliteSandboxStore.open(dir.resolve("db/agentenv.db"));
    }

    private SqliteSandboxStore sqlite() {
        return (SqliteSandboxStore) store;
    }

    @Test
    void an_insert_made_durable_by_the_next_write_is_read_at_once_with_full_sync_kept() {
        // given
        SandboxRecord creating = record(SandboxState.CREATING, T0);
        // when
        store.insert(creating, SandboxStore.Durability.WITH_NEXT_WRITE);
        // then: visible, and later writes are fsynced again (2 = FULL)
        assertThat(store.get(creating.id())).contains(creating);
        assertThat(sqlite().synchronousLevel()).isEqualTo(2);
        assertThat(store.replace(creating.withState(RUNNING), EnumSet.of(SandboxState.CREATING)))
                .isTrue();
        store = reopen();
        assertThat(store.get(creating.id()).orElseThrow().state()).isEqualTo(RUNNING);
        assertThat(sqlite().synchronousLevel()).isEqualTo(2);
    }

    @Test
    void a_deferred_insert_that_fails_changes_nothing_and_leaves_full_sync() {
        // given
        SandboxRecord record = record(RUNNING, T0);
        store.insert(record);
        // when / then: the same id again
        assertThatThrownBy(() -> store.insert(record, SandboxStore.Durability.WITH_NEXT_WRITE))
                .isInstanceOf(StoreException.class);
        assertThat(sqlite().synchronousLevel()).isEqualTo(2);
        assertThat(store.all()).containsExactly(record);
    }

    @Test
    void a_second_server_cannot_open_a_store_that_is_in_use() {
        assertThatThrownBy(() -> SqliteSandboxStore.open(dir.resolve("db/agentenv.db")))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("already open");
        store = reopen(); // released on close
        assertThat(store.all()).isEmpty();
    }

    @Test
    void the_file_uses_wal_journaling_and_records_its_schema_version() throws Exception {
        try (var c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("db/agentenv.db"));
                Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("PRAGMA journal_mode")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualToIgnoringCase("wal");
            }
            try (ResultSet rs = st.executeQuery("PRAGMA user_version")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isEqualTo(SqliteSandboxStore.schemaVersion());
            }
        }
    }
}
