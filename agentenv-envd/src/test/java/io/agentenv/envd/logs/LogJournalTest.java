package io.agentenv.envd.logs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.OptionalInt;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class LogJournalTest {

    @Test
    void entries_are_read_in_order_from_a_cursor_and_filtered_by_pid() {
        LogJournal journal = new LogJournal(Clock.systemUTC(), 1 << 16);
        journal.envd("INFO", "Main", "ready");
        journal.processEvent(7, "started");
        byte[] out = "hello\n".getBytes(StandardCharsets.UTF_8);
        journal.processOutput(7, "stdout", out, out.length);
        journal.processEvent(8, "started");

        LogJournal.Page all = journal.read(0, 10, OptionalInt.empty());
        assertThat(all.entries())
                .extracting(LogJournal.Entry::message)
                .containsExactly("ready", "started", "hello\n", "started");
        assertThat(all.nextCursor()).isEqualTo(5);

        LogJournal.Page second = journal.read(2, 1, OptionalInt.empty());
        assertThat(second.entries()).extracting(LogJournal.Entry::seq).containsExactly(2L);
        assertThat(second.nextCursor()).isEqualTo(3);

        assertThat(journal.read(0, 10, OptionalInt.of(7)).entries())
                .extracting(LogJournal.Entry::stream)
                .containsExactly("event", "stdout");
        assertThat(journal.read(5, 10, OptionalInt.empty()).entries()).isEmpty();
    }

    @Test
    void the_oldest_entries_are_dropped_when_the_budget_is_exceeded() {
        LogJournal journal = new LogJournal(Clock.systemUTC(), 2048);
        for (int i = 0; i < 100; i++) {
            journal.envd("INFO", "test", "message number " + i);
        }
        LogJournal.Page page = journal.read(0, 1000, OptionalInt.empty());
        assertThat(page.firstAvailable()).isGreaterThan(1);
        assertThat(page.entries().getLast().message()).isEqualTo("message number 99");
        assertThat(page.entries().getFirst().seq()).isEqualTo(page.firstAvailable());
    }
}
