package io.agentenv.server.orchestrator;

import io.agentenv.backend.mock.FakeEnvd;
import io.agentenv.backend.mock.Gate;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

import static org.assertj.core.api.Assertions.assertThat;

/** Keeping envd's journal with a paused state: bounded in time and size, and read back exactly. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class PausedLogsTest {
    private static final SandboxId ID = new SandboxId("p".repeat(SandboxId.LENGTH));

    @TempDir
    Path dir;
    final FakeEnvd envd = new FakeEnvd(new Resources(1, 512, 1024),
            Clock.fixed(Instant.parse("2026-03-01T10:00:00.123456789Z"), ZoneOffset.UTC));

    @Test
    void every_field_of_every_entry_reads_back_as_it_was_fetched() throws Exception {
        envd.log(EnvdLogEntry.Source.ENVD, "WARN", OptionalInt.empty(), "envd.process", "nöt ascii ✓\n");
        envd.log(EnvdLogEntry.Source.PROCESS, "INFO", OptionalInt.of(42), "stderr", "");
        List<EnvdLogEntry> fetched = envd.logs(0, 1000).entries();

        assertThat(PausedLogs.defaults().keep(ID, Optional.of(envd), dir)).isTrue();
        assertThat(PausedLogs.defaults().read(ID, dir)).contains(fetched);
    }

    @Test
    void a_guest_agent_that_does_not_answer_is_given_up_on_after_the_budget_and_nothing_is_kept() {
        Gate gate = envd.holdNext(FakeEnvd.Call.LOGS);
        try {
            assertThat(new PausedLogs(Duration.ofMillis(50), 64, 1 << 20).keep(ID, Optional.of(envd), dir)).isFalse();
            assertThat(dir.resolve(PausedLogs.FILE)).doesNotExist();
        } finally {
            gate.release();
        }
    }

    @Test
    void a_disconnected_guest_agent_keeps_nothing() {
        assertThat(PausedLogs.defaults().keep(ID, Optional.empty(), dir)).isFalse();
        assertThat(PausedLogs.defaults().read(ID, dir)).isEmpty();
    }

    @Test
    void at_most_max_bytes_of_text_and_max_pages_are_kept_oldest_first() throws Exception {
        for (int i = 0; i < 2_500; i++) {
            envd.log(EnvdLogEntry.Source.PROCESS, "INFO", OptionalInt.of(1), "stdout", "x".repeat(10));
        }
        // 10 + 6 + 4 = 20 bytes an entry
        assertThat(new PausedLogs(Duration.ofSeconds(10), 64, 20 * 150).keep(ID, Optional.of(envd), dir)).isTrue();
        assertThat(PausedLogs.defaults().read(ID, dir).orElseThrow()).isEqualTo(envd.logs(0, 150).entries());

        assertThat(new PausedLogs(Duration.ofSeconds(10), 2, 1 << 30).keep(ID, Optional.of(envd), dir)).isTrue();
        assertThat(PausedLogs.defaults().read(ID, dir).orElseThrow()).hasSize(2_000);
    }

    @Test
    void a_truncated_or_foreign_file_reads_as_nothing_kept() throws Exception {
        envd.log(EnvdLogEntry.Source.PROCESS, "INFO", OptionalInt.of(1), "stdout", "a line long enough to cut");
        assertThat(PausedLogs.defaults().keep(ID, Optional.of(envd), dir)).isTrue();
        byte[] whole = Files.readAllBytes(dir.resolve(PausedLogs.FILE));
        Files.write(dir.resolve(PausedLogs.FILE), Arrays.copyOf(whole, whole.length - 5));
        assertThat(PausedLogs.defaults().read(ID, dir)).isEmpty();

        Files.writeString(dir.resolve(PausedLogs.FILE), "not a log file at all");
        assertThat(PausedLogs.defaults().read(ID, dir)).isEmpty();
    }
}
