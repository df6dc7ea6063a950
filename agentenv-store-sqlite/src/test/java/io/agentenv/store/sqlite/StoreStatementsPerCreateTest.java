package io.agentenv.store.sqlite;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.orchestrator.GuestDefaults;
import io.agentenv.orchestrator.SandboxQuery;
import io.agentenv.orchestrator.SandboxRecord;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.SortOrder;
import io.agentenv.orchestrator.TimeoutAction;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a create, its first command and its kill cost the store, as the orchestrator calls it (Launcher: a deferred
 * insert of the CREATING record, then its replace by the RUNNING one; the proxy's first lookup; KillOperation: a
 * read, the CAS to KILLING, a read of the instance id, the delete).
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class StoreStatementsPerCreateTest {
    private static final SecureRandom RANDOM = new SecureRandom();

    @TempDir
    Path dir;

    private SqliteSandboxStore store;

    @BeforeEach
    void open() {
        store = SqliteSandboxStore.open(dir.resolve("agentenv.db"));
    }

    @AfterEach
    void close() {
        store.close();
    }

    @Test
    void create_command_and_kill_run_11_statements_in_4_transactions_compiling_none_warm() {
        // given one sandbox's lifetime already run (the statements compiled)
        lifetime(Map.of("k", "v"));
        long compiled = store.compiledStatements();
        long uses = store.statementUses();
        long transactions = store.transactions();

        // when a second one lives the same way
        lifetime(Map.of("k", "v"));

        // then: insert (safety level off, row, metadata row, safety level back), replace (stored metadata, row),
        // three reads, the CAS and the delete; no statement compiled again
        assertThat(store.statementUses() - uses).isEqualTo(11);
        assertThat(store.transactions() - transactions).isEqualTo(4);
        assertThat(store.compiledStatements()).isEqualTo(compiled);
    }

    @Test
    void a_sandbox_without_metadata_writes_no_metadata_rows_and_runs_ten_statements() {
        lifetime(Map.of());
        long uses = store.statementUses();

        lifetime(Map.of());

        assertThat(store.statementUses() - uses).isEqualTo(10);
    }

    @Test
    void a_replace_that_keeps_the_metadata_leaves_its_index_rows_as_they_are() throws SQLException {
        // given
        SandboxRecord creating = record(SandboxState.CREATING, Map.of("team", "a", "job", "7"));
        store.insert(creating, SandboxStore.Durability.WITH_NEXT_WRITE);
        List<Long> rowsBefore = metadataRowIds(creating.id());
        long uses = store.statementUses();

        // when
        boolean replaced = store.replace(running(creating), EnumSet.of(SandboxState.CREATING));

        // then: the stored metadata read and the row updated; the index rows not deleted and written again
        assertThat(replaced).isTrue();
        assertThat(store.statementUses() - uses).isEqualTo(2);
        assertThat(metadataRowIds(creating.id())).hasSize(2).isEqualTo(rowsBefore);
        assertThat(store.list(byMetadata(Map.of("team", "a"))).items())
                .extracting(SandboxRecord::id)
                .containsExactly(creating.id());
    }

    @Test
    void a_replace_that_changes_the_metadata_rewrites_its_index_rows() {
        // given
        SandboxRecord creating = record(SandboxState.CREATING, Map.of("team", "a"));
        store.insert(creating);

        // when
        SandboxRecord changed = creating.toBuilder()
                .state(SandboxState.RUNNING)
                .metadata(Map.of("team", "b"))
                .build();
        boolean replaced = store.replace(changed, EnumSet.of(SandboxState.CREATING));

        // then the filters see the new pair only
        assertThat(replaced).isTrue();
        assertThat(store.get(creating.id())).contains(changed);
        assertThat(store.list(byMetadata(Map.of("team", "b"))).items())
                .extracting(SandboxRecord::id)
                .containsExactly(creating.id());
        assertThat(store.list(byMetadata(Map.of("team", "a"))).items()).isEmpty();
    }

    @Test
    void a_replace_of_a_missing_record_or_from_another_state_changes_nothing() {
        SandboxRecord creating = record(SandboxState.CREATING, Map.of("team", "a"));
        assertThat(store.replace(running(creating), EnumSet.of(SandboxState.CREATING)))
                .isFalse();

        store.insert(creating);
        assertThat(store.replace(running(creating).withState(SandboxState.PAUSED), EnumSet.of(SandboxState.RUNNING)))
                .isFalse();
        assertThat(store.get(creating.id())).contains(creating);
    }

    /** The store calls of one sandbox's create, first command and kill, in the orchestrator's order. */
    private void lifetime(Map<String, String> metadata) {
        SandboxRecord creating = record(SandboxState.CREATING, metadata);
        store.insert(creating, SandboxStore.Durability.WITH_NEXT_WRITE);
        assertThat(store.replace(running(creating), EnumSet.of(SandboxState.CREATING)))
                .isTrue();
        assertThat(store.get(creating.id())).isPresent(); // the proxy's lookup for the first command
        assertThat(store.get(creating.id())).isPresent(); // the kill's visible record
        assertThat(store.transition(creating.id(), EnumSet.of(SandboxState.RUNNING), SandboxState.KILLING))
                .isTrue();
        assertThat(store.get(creating.id())).isPresent(); // the kill reads the instance id
        assertThat(store.delete(creating.id(), EnumSet.of(SandboxState.KILLING)))
                .isTrue();
    }

    private List<Long> metadataRowIds(SandboxId id) throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("agentenv.db"));
                PreparedStatement st =
                        c.prepareStatement("SELECT rowid FROM sandbox_metadata WHERE sandbox_id = ? ORDER BY rowid")) {
            st.setString(1, id.value());
            List<Long> ids = new ArrayList<>();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getLong(1));
                }
            }
            return ids;
        }
    }

    private static SandboxQuery byMetadata(Map<String, String> metadata) {
        return new SandboxQuery(
                EnumSet.allOf(SandboxState.class),
                metadata,
                Optional.empty(),
                Optional.empty(),
                SortOrder.ASC,
                10,
                Optional.empty());
    }

    private static SandboxRecord running(SandboxRecord creating) {
        return creating.withState(SandboxState.RUNNING)
                .withTtl(creating.timeout(), Optional.of(creating.startedAt().plus(creating.timeout())));
    }

    static SandboxRecord record(SandboxState state, Map<String, String> metadata) {
        return new SandboxRecord(
                SandboxId.random(RANDOM),
                new TemplateId("base"),
                Optional.of("base"),
                state,
                Instant.parse("2026-01-01T00:00:00Z"),
                Duration.ofSeconds(300),
                Optional.empty(),
                TimeoutAction.KILL,
                PauseMode.WITH_MEMORY,
                false,
                true,
                new Resources(2, 512, 1024),
                metadata,
                Map.of(),
                NetworkPolicy.DEFAULT,
                "{}",
                Optional.empty(),
                Optional.of(UUID.randomUUID()),
                Optional.empty(),
                GuestDefaults.NONE,
                List.of());
    }
}
