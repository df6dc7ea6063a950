package io.agentenv.backend.container.guest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.agentenv.spi.EnvdLogEntry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class GuestJournalTest {

    @TempDir
    Path dir;

    private Path rootfs() throws IOException {
        return Files.createDirectories(dir.resolve("rootfs"));
    }

    private Path journal(Path rootfs) throws IOException {
        Path file = rootfs.resolve(EnvdLayout.ENVD_JOURNAL.substring(1));
        Files.createDirectories(file.getParent());
        return file;
    }

    /** A line as envd's JournalFile writes it. */
    private static String line(long seq, String stream, String message, boolean withPid) {
        return "{\"seq\":" + seq + ",\"timestamp\":\"2026-11-30T01:00:00." + String.format("%03d", seq % 1000)
                + "Z\",\"source\":\"" + (withPid ? "process" : "envd") + "\",\"level\":\"INFO\","
                + (withPid ? "\"pid\":7," : "") + "\"stream\":\"" + stream + "\",\"message\":\"" + message + "\"}\n";
    }

    private Path kept() {
        return dir.resolve(GuestJournal.FILE);
    }

    @Test
    void the_previous_and_current_file_are_kept_and_read_back_in_order_with_every_field() throws IOException {
        Path rootfs = rootfs();
        Path file = journal(rootfs);
        Files.writeString(
                file.resolveSibling("envd.jsonl.1"),
                line(1, "io.agentenv.envd.Main", "ready", false) + line(3, "stdout", "three\\n", true));
        Files.writeString(file, line(2, "event", "started", true) + line(4, "stderr", "nöt ascii ✓", true));

        assertThat(GuestJournal.keep(List.of(rootfs), kept())).isPresent();
        List<EnvdLogEntry> entries = GuestJournal.read(kept()).orElseThrow();

        assertThat(entries).extracting(EnvdLogEntry::seq).containsExactly(1L, 2L, 3L, 4L);
        assertThat(entries.getFirst())
                .isEqualTo(new EnvdLogEntry(
                        1,
                        Instant.parse("2026-11-30T01:00:00.001Z"),
                        EnvdLogEntry.Source.ENVD,
                        "INFO",
                        OptionalInt.empty(),
                        "io.agentenv.envd.Main",
                        "ready"));
        assertThat(entries.get(2))
                .isEqualTo(new EnvdLogEntry(
                        3,
                        Instant.parse("2026-11-30T01:00:00.003Z"),
                        EnvdLogEntry.Source.PROCESS,
                        "INFO",
                        OptionalInt.of(7),
                        "stdout",
                        "three\n"));
        assertThat(entries.getLast().message()).isEqualTo("nöt ascii ✓");
    }

    @Test
    void lines_that_are_not_entries_are_skipped() throws IOException {
        Path rootfs = rootfs();
        Files.writeString(
                journal(rootfs),
                "garbage\n{}\n" + line(1, "stdout", "kept", true)
                        + "{\"seq\":-1,\"timestamp\":\"x\"}\n{\"seq\":2,\"timestamp\":\"2026-11-30T01:00:00Z\",\"source\":\"alien\","
                        + "\"level\":\"INFO\",\"stream\":\"s\",\"message\":\"m\"}\n"
                        + line(3, "stdout", "also kept", true) + "{\"seq\":4");
        GuestJournal.keep(List.of(rootfs), kept());
        assertThat(GuestJournal.read(kept()).orElseThrow())
                .extracting(EnvdLogEntry::message)
                .containsExactly("kept", "also kept");
    }

    @Test
    void only_the_newest_entries_within_envds_budget_are_served_as_envds_journal_would() {
        List<EnvdLogEntry> entries = new ArrayList<>();
        int size = 1000; // cost 64 + 1000 + 6 = 1070 each: 979 fit in 1 MiB
        for (int i = 1; i <= 1200; i++) {
            entries.add(new EnvdLogEntry(
                    i,
                    Instant.EPOCH,
                    EnvdLogEntry.Source.PROCESS,
                    "INFO",
                    OptionalInt.of(1),
                    "stdout",
                    "x".repeat(size)));
        }
        entries.add(entries.get(1199)); // a repeated line
        List<EnvdLogEntry> served = GuestJournal.newestWithinBudget(entries.reversed());
        assertThat(served).hasSize(GuestJournal.BUDGET / 1070);
        assertThat(served.getLast().seq()).isEqualTo(1200);
        assertThat(served).extracting(EnvdLogEntry::seq).isSorted().doesNotHaveDuplicates();

        EnvdLogEntry huge = new EnvdLogEntry(
                1201,
                Instant.EPOCH,
                EnvdLogEntry.Source.ENVD,
                "INFO",
                OptionalInt.empty(),
                "envd",
                "y".repeat(GuestJournal.BUDGET));
        entries.add(huge);
        assertThat(GuestJournal.newestWithinBudget(entries)).containsExactly(huge); // the newest one always stays
    }

    @Test
    void the_journal_is_looked_up_through_the_layers_as_the_overlay_shows_it() throws IOException {
        Path upper = Files.createDirectories(dir.resolve("upper"));
        Path lower = Files.createDirectories(dir.resolve("lower"));
        Path template = Files.createDirectories(dir.resolve("template"));
        Files.writeString(journal(template), line(1, "stdout", "the template's", true));
        Files.writeString(journal(lower), line(2, "stdout", "the snapshot's", true));
        Files.writeString(
                journal(lower).resolveSibling("envd.jsonl.1"), line(1, "stdout", "rotated in the snapshot", true));
        Files.createDirectories(upper.resolve("var/log/agentenv"));
        Files.createDirectory(upper.resolve("var/log/agentenv/envd.jsonl.1")); // hides the lower's

        GuestJournal.keep(List.of(upper, lower, template), kept());
        assertThat(GuestJournal.read(kept()).orElseThrow())
                .extracting(EnvdLogEntry::message)
                .containsExactly("the snapshot's");

        Files.delete(kept());
        Files.writeString(journal(upper), line(3, "stdout", "its own", true));
        GuestJournal.keep(List.of(upper, lower, template), kept());
        assertThat(GuestJournal.read(kept()).orElseThrow())
                .extracting(EnvdLogEntry::message)
                .containsExactly("its own");
    }

    @Test
    void no_journal_file_keeps_nothing_and_reads_as_none() throws IOException {
        assertThat(GuestJournal.keep(List.of(rootfs()), kept())).isEmpty();
        assertThat(kept()).doesNotExist();
        assertThat(GuestJournal.read(kept())).isEmpty();
    }

    @Test
    void a_symlinked_directory_on_the_way_is_never_followed_to_a_host_file() throws IOException {
        Path rootfs = rootfs();
        Path host = Files.createDirectories(dir.resolve("host-secrets/agentenv"));
        Files.writeString(host.resolve("envd.jsonl"), line(1, "stdout", "a host file", true));
        Files.createDirectories(rootfs.resolve("var"));
        Files.createSymbolicLink(rootfs.resolve("var/log"), dir.resolve("host-secrets"));

        assertThat(GuestJournal.keep(List.of(rootfs), kept())).isEmpty();
        assertThat(kept()).doesNotExist();
    }

    @Test
    void a_symlink_in_place_of_the_file_is_not_followed() throws IOException {
        Path rootfs = rootfs();
        Path file = journal(rootfs);
        Path host = dir.resolve("host-file");
        Files.writeString(host, line(1, "stdout", "a host file", true));
        Files.createSymbolicLink(file, host);
        assertThat(GuestJournal.keep(List.of(rootfs), kept())).isEmpty();

        Files.delete(file);
        Files.writeString(file, line(2, "stdout", "the sandbox's own", true));
        Files.createSymbolicLink(file.resolveSibling("envd.jsonl.1"), host);
        GuestJournal.keep(List.of(rootfs), kept());
        assertThat(GuestJournal.read(kept()).orElseThrow())
                .extracting(EnvdLogEntry::message)
                .containsExactly("the sandbox's own");
    }

    @Test
    void a_fifo_in_place_of_the_file_is_not_opened() throws Exception {
        Path rootfs = rootfs();
        Path file = journal(rootfs);
        assertThat(new ProcessBuilder("mkfifo", file.toString())
                        .inheritIO()
                        .start()
                        .waitFor())
                .isZero();
        assertTimeoutPreemptively(
                Duration.ofSeconds(10),
                () -> assertThat(GuestJournal.keep(List.of(rootfs), kept())).isEmpty());
    }

    @Test
    void of_a_huge_file_only_the_end_is_copied_and_its_cut_first_line_is_skipped() throws IOException {
        Path rootfs = rootfs();
        Path file = journal(rootfs);
        StringBuilder text = new StringBuilder();
        String filler = "z".repeat(1000);
        long seq = 0;
        while (text.length() < GuestJournal.MAX_COPY_PER_FILE + 100_000) {
            text.append(line(++seq, "stdout", filler, true));
        }
        Files.writeString(file, text, StandardCharsets.UTF_8);

        assertThat(GuestJournal.keep(List.of(rootfs), kept())).contains(GuestJournal.MAX_COPY_PER_FILE);
        List<EnvdLogEntry> entries = GuestJournal.read(kept()).orElseThrow();
        assertThat(entries.getLast().seq()).isEqualTo(seq);
        assertThat(entries).allSatisfy(e -> assertThat(e.message()).isEqualTo(filler));
    }
}
