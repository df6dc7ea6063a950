package io.agentenv.envd.logs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class JournalFileTest {

    @TempDir
    Path dir;

    private List<JsonObject> lines(Path... files) throws IOException {
        List<JsonObject> out = new ArrayList<>();
        for (Path file : files) {
            if (Files.exists(file)) {
                for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                    out.add(JsonParser.parseString(line).getAsJsonObject());
                }
            }
        }
        out.sort(Comparator.comparingLong(o -> o.get("seq").getAsLong()));
        return out;
    }

    @Test
    void discarded_entries_leave_memory_and_both_files_and_their_numbers_are_reused() throws IOException {
        Path file = dir.resolve("envd.jsonl");
        // the file rotates at a smaller budget than memory's: memory keeps everything
        LogJournal journal = new LogJournal(Clock.systemUTC(), 1 << 16, Optional.of(JournalFile.create(file, 2048)));
        journal.envd("INFO", "Main", "kept");
        long mark = journal.mark();
        for (int i = 0; i < 40; i++) { // enough to rotate the file
            journal.envd("INFO", "Warmup", "discarded " + i);
        }
        assertThat(file.resolveSibling("envd.jsonl.1")).exists();

        journal.discardFrom(mark);
        journal.envd("INFO", "Main", "after");

        assertThat(journal.read(0, 100, OptionalInt.empty()).entries())
                .extracting(LogJournal.Entry::message)
                .containsExactly("kept", "after");
        assertThat(lines(file, file.resolveSibling("envd.jsonl.1")))
                .extracting(
                        o -> o.get("seq").getAsLong() + " " + o.get("message").getAsString())
                .containsExactly("1 kept", "2 after");
        assertThat(file.resolveSibling("envd.jsonl.new")).doesNotExist();
    }

    @Test
    void a_mark_outside_the_written_numbers_is_refused() {
        LogJournal journal = new LogJournal(Clock.systemUTC(), 2048);
        journal.envd("INFO", "Main", "one");
        assertThatThrownBy(() -> journal.discardFrom(3)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> journal.discardFrom(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void every_entry_is_written_as_a_json_line_with_the_fields_of_get_logs() throws IOException {
        Path file = dir.resolve("var/log/agentenv/envd.jsonl");
        LogJournal journal = new LogJournal(Clock.systemUTC(), 1 << 16, Optional.of(JournalFile.create(file, 1 << 16)));
        journal.envd("INFO", "io.agentenv.envd.Main", "ready \"quoted\" <html> é");
        byte[] out = "hello\n".getBytes(StandardCharsets.UTF_8);
        journal.processOutput(7, "stdout", out, out.length);

        List<JsonObject> lines = lines(file);
        List<LogJournal.Entry> entries =
                journal.read(0, 10, OptionalInt.empty()).entries();
        assertThat(lines).hasSize(2);
        for (int i = 0; i < 2; i++) {
            LogJournal.Entry e = entries.get(i);
            JsonObject line = lines.get(i);
            assertThat(line.get("seq").getAsLong()).isEqualTo(e.seq());
            assertThat(line.get("timestamp").getAsString()).isEqualTo(e.time().toString());
            assertThat(line.get("level").getAsString()).isEqualTo(e.level());
            assertThat(line.get("stream").getAsString()).isEqualTo(e.stream());
            assertThat(line.get("message").getAsString()).isEqualTo(e.message());
        }
        assertThat(lines.get(0).get("source").getAsString()).isEqualTo("envd");
        assertThat(lines.get(0).has("pid")).isFalse();
        assertThat(lines.get(1).get("source").getAsString()).isEqualTo("process");
        assertThat(lines.get(1).get("pid").getAsInt()).isEqualTo(7);
        assertThat(Files.readString(file)).contains("<html>"); // not escaped for HTML: the host parses JSON
    }

    @Test
    void the_file_rotates_at_its_budget_and_both_files_hold_at_least_what_the_journal_has() throws IOException {
        Path file = dir.resolve("envd.jsonl");
        int budget = 4096;
        LogJournal journal = new LogJournal(Clock.systemUTC(), budget, Optional.of(JournalFile.create(file, budget)));
        for (int i = 0; i < 500; i++) {
            journal.envd("INFO", "test", "message number " + i);
        }
        Path previous = dir.resolve("envd.jsonl.1");
        assertThat(Files.size(file) + Files.size(previous)).isLessThan(2L * JournalFile.BYTES_PER_BUDGET * budget);
        List<Long> inFiles = lines(previous, file).stream()
                .map(o -> o.get("seq").getAsLong())
                .toList();
        List<Long> inMemory = journal.read(0, 1000, OptionalInt.empty()).entries().stream()
                .map(LogJournal.Entry::seq)
                .toList();
        assertThat(inFiles).containsAll(inMemory).endsWith(500L);
        assertThat(inFiles).isSortedAccordingTo(Comparator.naturalOrder()).doesNotHaveDuplicates();
    }

    @Test
    void a_fresh_journal_file_starts_empty_and_is_made_again_when_its_directory_is_gone() throws IOException {
        Path file = dir.resolve("log/envd.jsonl");
        Files.createDirectories(file.getParent());
        Files.writeString(file, "{\"seq\":99}\n");
        Files.writeString(dir.resolve("log/envd.jsonl.1"), "{\"seq\":98}\n");
        LogJournal journal = new LogJournal(Clock.systemUTC(), 1 << 16, Optional.of(JournalFile.create(file, 1 << 16)));
        assertThat(file).doesNotExist();
        assertThat(dir.resolve("log/envd.jsonl.1")).doesNotExist();

        journal.envd("INFO", "test", "one");
        Files.delete(file);
        Files.delete(file.getParent());
        journal.envd("INFO", "test", "two");
        assertThat(lines(file)).extracting(o -> o.get("message").getAsString()).containsExactly("two");
    }

    @Test
    void a_symlink_in_place_of_the_file_is_not_written_through() throws IOException {
        Path file = dir.resolve("envd.jsonl");
        Path target = dir.resolve("elsewhere");
        Files.writeString(target, "");
        LogJournal journal = new LogJournal(Clock.systemUTC(), 1 << 16, Optional.of(JournalFile.create(file, 1 << 16)));
        Files.createSymbolicLink(file, target);
        journal.envd("INFO", "test", "not through the link");
        assertThat(target).isEmptyFile();
        assertThat(journal.read(0, 10, OptionalInt.empty()).entries()).hasSize(1); // the journal itself goes on
    }

    @Test
    void a_fifo_in_place_of_the_file_does_not_block_the_journal() throws Exception {
        Path file = dir.resolve("envd.jsonl");
        LogJournal journal = new LogJournal(Clock.systemUTC(), 1 << 16, Optional.of(JournalFile.create(file, 1 << 16)));
        Process mkfifo =
                new ProcessBuilder("mkfifo", file.toString()).inheritIO().start();
        assertThat(mkfifo.waitFor()).isZero();
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> journal.envd("INFO", "test", "not into the fifo"));
        assertThat(journal.read(0, 10, OptionalInt.empty()).entries()).hasSize(1);
    }

    @Test
    void a_relative_path_is_refused_and_a_file_that_cannot_be_made_is_none() throws IOException {
        Files.writeString(dir.resolve("a-file"), "");
        assertThatThrownBy(() -> JournalFile.create(Path.of("envd.jsonl"), 1 << 16))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(JournalFile.open(dir.resolve("a-file/below-a-file.jsonl"), 1 << 16))
                .isEmpty();
    }

    @Test
    void touching_the_file_makes_it_when_absent_and_leaves_its_lines_as_they_are() throws IOException {
        Path file = dir.resolve("var/log/agentenv/envd.jsonl");
        JournalFile journalFile = JournalFile.create(file, 1 << 16);
        LogJournal journal = new LogJournal(Clock.systemUTC(), 1 << 16, Optional.of(journalFile));

        journal.prepareFile();
        assertThat(file).exists().isEmptyFile();

        journal.envd("INFO", "test", "one");
        journal.prepareFile();
        assertThat(lines(file)).extracting(o -> o.get("message").getAsString()).containsExactly("one");
    }

    @Test
    void touching_leaves_a_symlink_put_in_the_files_place_alone() throws IOException {
        Path file = dir.resolve("envd.jsonl");
        JournalFile journalFile = JournalFile.create(file, 1 << 16);
        Path elsewhere = dir.resolve("elsewhere");
        Files.createSymbolicLink(file, elsewhere);

        journalFile.touch();

        assertThat(elsewhere).doesNotExist();
        assertThat(Files.isSymbolicLink(file)).isTrue();
    }
}
