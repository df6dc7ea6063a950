package io.agentenv.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.orchestrator.SandboxStore;
import io.agentenv.orchestrator.StoreException;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/**
 * A unit whose connection is lost while it commits (a database restart ends sessions at any point): the outcome is
 * learned from the database by the transaction's id, so a change that was made is reported made (not a failure that
 * the caller would undo around a change that stays) and one that was not is made once by running the unit again. The
 * connection is cut by a relay in front of the test's server ({@link CuttingProxy}) at an exact point of the unit.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class PostgresInDoubtCommitTest {
    private static final Duration CONNECT = Duration.ofMillis(500);

    private PostgresServer.TestDatabase database;
    private CuttingProxy proxy;
    private PostgresDatabase db;

    @BeforeEach
    void open() throws Exception {
        database = PostgresServer.shared().newDatabase();
        proxy = new CuttingProxy(PostgresServer.shared().port());
        // two connections (Flyway's migration takes both); only the unit's sends anything while a cut is armed
        db = PostgresDatabase.open(new PostgresDatabase.Settings(
                "jdbc:postgresql://127.0.0.1:" + proxy.port() + "/" + database.name(),
                database.user(),
                database.password(),
                2,
                CONNECT,
                Duration.ofSeconds(5)));
        db.write(
                "create the test table",
                s -> s.prepared("CREATE TABLE note (text TEXT NOT NULL)").execute());
    }

    @AfterEach
    void close() throws Exception {
        if (db != null) {
            db.close();
        }
        proxy.close();
        database.close();
    }

    @Test
    void a_commit_whose_answer_was_lost_is_reported_made_and_not_run_again() {
        AtomicInteger runs = new AtomicInteger();

        String value = db.write("add a note", SandboxStore.Durability.NOW, s -> {
            runs.incrementAndGet();
            s.prepared("INSERT INTO note VALUES ('made')").executeUpdate();
            proxy.arm(CuttingProxy.Cut.NEXT_REPLY); // the server commits; its answer is lost
            return "the unit's value";
        });

        assertThat(proxy.armed()).as("the cut happened").isFalse();
        assertThat(value).isEqualTo("the unit's value");
        assertThat(runs).hasValue(1);
        assertThat(notes()).isEqualTo(1);
    }

    @Test
    void a_commit_the_server_never_received_runs_the_unit_again_once() {
        AtomicInteger runs = new AtomicInteger();

        String value = db.write("add a note", SandboxStore.Durability.WITH_NEXT_WRITE, s -> {
            s.prepared("INSERT INTO note VALUES ('made')").executeUpdate();
            if (runs.incrementAndGet() == 1) {
                proxy.arm(CuttingProxy.Cut.NEXT_REQUEST); // the commit never reaches the server
            }
            return "the unit's value";
        });

        assertThat(proxy.armed()).as("the cut happened").isFalse();
        assertThat(value).isEqualTo("the unit's value");
        assertThat(runs).hasValue(2);
        assertThat(notes()).isEqualTo(1);
    }

    @Test
    void a_commit_in_doubt_the_database_cannot_settle_is_an_error_that_says_so() {
        assertThatThrownBy(() -> db.write("add a note", SandboxStore.Durability.NOW, s -> {
                    s.prepared("INSERT INTO note VALUES ('made')").executeUpdate();
                    proxy.refuse(true); // after the cut no connection can ask
                    proxy.arm(CuttingProxy.Cut.NEXT_REPLY);
                    return null;
                }))
                .isInstanceOf(StoreException.class)
                .hasMessage("store failed to add a note")
                .cause()
                .hasMessageStartingWith("whether add a note committed is unknown");

        // it had committed: which is why the error cannot say it failed
        proxy.refuse(false);
        assertThat(notes()).isEqualTo(1);
    }

    private int notes() {
        return db.read("count the notes", s -> {
            try (ResultSet row = s.prepared("SELECT count(*) FROM note").executeQuery()) {
                row.next();
                return row.getInt(1);
            }
        });
    }
}
