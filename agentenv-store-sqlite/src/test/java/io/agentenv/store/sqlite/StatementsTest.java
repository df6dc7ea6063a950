package io.agentenv.store.sqlite;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class StatementsTest {
    private Connection connection;
    private Statements statements;

    @BeforeEach
    void open() throws SQLException {
        connection = DriverManager.getConnection("jdbc:sqlite::memory:");
        statements = new Statements(connection);
    }

    @AfterEach
    void close() throws SQLException {
        statements.close();
        connection.close();
    }

    @Test
    void the_same_sql_is_compiled_once_and_the_statement_is_reused() throws SQLException {
        // when
        PreparedStatement first = statements.prepared("SELECT ? + 1");
        int a = plusOne(first, 1);
        PreparedStatement second = statements.prepared("SELECT ? + 1");
        int b = plusOne(second, 41);

        // then
        assertThat(second).isSameAs(first);
        assertThat(a).isEqualTo(2);
        assertThat(b).isEqualTo(42);
        assertThat(statements.compiled()).isEqualTo(1);
        assertThat(statements.uses()).isEqualTo(2);
    }

    @Test
    void past_the_limit_the_least_recently_used_statement_is_closed_and_later_recompiled() throws SQLException {
        // given the limit reached, the first one used again last
        PreparedStatement oldest = statements.prepared("SELECT 0");
        PreparedStatement second = statements.prepared("SELECT 1");
        for (int i = 2; i < Statements.LIMIT; i++) {
            statements.prepared("SELECT " + i);
        }
        statements.prepared("SELECT 0");

        // when one more comes in
        statements.prepared("SELECT " + Statements.LIMIT);

        // then the least recently used one (SELECT 1) went, closed; SELECT 0 stayed
        assertThat(statements.size()).isEqualTo(Statements.LIMIT);
        assertThat(second.isClosed()).isTrue();
        assertThat(oldest.isClosed()).isFalse();
        assertThat(statements.prepared("SELECT 0")).isSameAs(oldest);
        long compiled = statements.compiled();
        assertThat(statements.prepared("SELECT 1")).isNotSameAs(second);
        assertThat(statements.compiled()).isEqualTo(compiled + 1);
    }

    @Test
    void closing_closes_every_kept_statement() throws SQLException {
        PreparedStatement kept = statements.prepared("SELECT 1");

        statements.close();

        assertThat(kept.isClosed()).isTrue();
        assertThat(statements.size()).isZero();
    }

    private static int plusOne(PreparedStatement st, int n) throws SQLException {
        st.setInt(1, n);
        try (ResultSet rs = st.executeQuery()) {
            assertThat(rs.next()).isTrue();
            return rs.getInt(1);
        }
    }
}
