package io.agentenv.envd.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.envd.logs.LogJournal;
import io.agentenv.envd.logs.Logging;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class SessionTest {
    private final Clock clock = Clock.fixed(Instant.parse("2026-11-29T12:00:00Z"), ZoneOffset.UTC);

    @Test
    void without_a_token_everyone_is_authorized_and_with_one_only_its_holder() {
        Session session = new Session(clock);
        assertThat(session.isAuthorized(null)).isTrue();

        session.init(
                new InitRequest(Optional.of("tok"), Map.of(), Optional.empty(), Optional.empty(), Optional.empty()));

        assertThat(session.isAuthorized("tok")).isTrue();
        assertThat(session.isAuthorized("tok2")).isFalse();
        assertThat(session.isAuthorized(null)).isFalse();
    }

    @Test
    void init_keeps_earlier_values_it_does_not_mention_and_records_the_clock_skew() {
        Session session = new Session(clock);
        session.init(new InitRequest(
                Optional.of("tok"), Map.of("A", "1"), Optional.of("user"), Optional.of("/work"), Optional.empty()));
        session.init(new InitRequest(
                Optional.empty(),
                Map.of("B", "2"),
                Optional.empty(),
                Optional.empty(),
                Optional.of(Instant.parse("2026-11-29T12:00:05Z"))));

        SessionState state = session.current();
        assertThat(state.envVars()).isEqualTo(Map.of("A", "1", "B", "2"));
        assertThat(state.defaultUser()).contains("user");
        assertThat(state.defaultWorkdir()).contains(Path.of("/work"));
        assertThat(state.clockSkew()).isEqualTo(Duration.ofSeconds(5));
        assertThat(session.isAuthorized("tok")).isTrue();
    }

    @Test
    void restore_takes_the_session_back_to_an_earlier_state_token_included() {
        Session session = new Session(clock);
        SessionState uninitialised = session.current();
        session.init(new InitRequest(
                Optional.of("tok"), Map.of("A", "1"), Optional.of("user"), Optional.of("/work"), Optional.empty()));

        session.restore(uninitialised);

        assertThat(session.current()).isEqualTo(uninitialised);
        assertThat(session.hasAccessToken()).isFalse();
        assertThat(session.isAuthorized(null)).isTrue();
        assertThat(session.defaultUser()).isEmpty();
    }

    @Test
    void an_init_that_sets_nothing_stays_out_of_the_journal_one_that_sets_something_is_in() {
        LogJournal journal = new LogJournal(clock, 1 << 16, Optional.empty());
        Logging.configure(journal, Level.INFO, "-");
        try {
            Session session = new Session(clock);

            session.init(new InitRequest(
                    Optional.empty(),
                    Map.of(),
                    Optional.empty(),
                    Optional.empty(),
                    Optional.of(clock.instant()))); // a warm pool's init, before the claim
            session.init(new InitRequest(
                    Optional.of("tok"),
                    Map.of(),
                    Optional.of("user"),
                    Optional.empty(),
                    Optional.of(clock.instant()))); // the claim's

            assertThat(journal.read(0, 100, OptionalInt.empty()).entries())
                    .extracting(LogJournal.Entry::message)
                    .singleElement()
                    .asString()
                    .startsWith("session initialised")
                    .contains("token_set=true");
        } finally {
            Logging.configure(new LogJournal(clock, 1024, Optional.empty()), Level.WARN, "-");
        }
    }

    @Test
    void the_token_never_appears_in_to_string() {
        Session session = new Session(clock);
        InitRequest request = new InitRequest(
                Optional.of("very-secret"), Map.of(), Optional.empty(), Optional.empty(), Optional.empty());
        session.init(request);
        assertThat(request.toString()).doesNotContain("very-secret");
        assertThat(session.current().toString()).doesNotContain("very-secret").contains("<redacted>");
    }

    @Test
    void a_relative_default_workdir_is_rejected() {
        Session session = new Session(clock);
        assertThatThrownBy(() -> session.init(new InitRequest(
                        Optional.empty(), Map.of(), Optional.empty(), Optional.of("relative/dir"), Optional.empty())))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
