package io.agentenv.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.mock.FakeEnvd;
import io.agentenv.backend.mock.MockBackendFactory;
import io.agentenv.backend.mock.MockSandbox;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.EnvdException;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.LaunchSource;
import io.agentenv.spi.LaunchSpec;
import io.agentenv.spi.NetworkPolicy;
import io.agentenv.spi.PauseMode;
import io.agentenv.spi.PausedState;
import io.agentenv.spi.SandboxBackend;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A paused sandbox's logs: what the backend kept with its paused state (no guest call at pause), else the file an
 * earlier version wrote, read back exactly; nothing when neither is there.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class PausedLogsTest {
    private static final SandboxId ID = new SandboxId("p".repeat(SandboxId.LENGTH));

    @TempDir
    Path dir;

    final MockBackendFactory backends = new MockBackendFactory();
    final PausedLogs logs = new PausedLogs(backends);

    private MockSandbox running() throws Exception {
        SandboxBackend sandbox = backends.prepare(
                new LaunchSpec(
                        ID, new TemplateId("base"), Map.of(), "user", new AccessToken("t"), NetworkPolicy.DEFAULT),
                new LaunchSource.Template(new TemplateId("base")));
        sandbox.start(Duration.ofSeconds(1));
        return (MockSandbox) sandbox;
    }

    private StoredState stored(PausedState paused) {
        return new StoredState(paused.encode(), dir);
    }

    @Test
    void logs_kept_with_the_paused_state_are_read_back_and_the_guest_is_not_asked() throws Exception {
        MockSandbox sandbox = running();
        FakeEnvd envd = sandbox.fakeEnvd();
        envd.log(EnvdLogEntry.Source.ENVD, "WARN", OptionalInt.empty(), "envd.process", "nöt ascii ✓\n");
        envd.log(EnvdLogEntry.Source.PROCESS, "INFO", OptionalInt.of(42), "stderr", "");
        List<EnvdLogEntry> journal = envd.logs(0, 1000).entries();

        PausedState paused = sandbox.pause(PauseMode.WITH_MEMORY, dir);

        assertThat(logs.read(ID, stored(paused))).contains(journal);
        assertThat(dir.resolve(PausedLogs.FILE)).doesNotExist(); // the orchestrator wrote nothing of its own
    }

    @Test
    void a_state_whose_backend_kept_no_logs_has_none() throws Exception {
        MockSandbox sandbox = running();
        sandbox.fakeEnvd().failNext(FakeEnvd.Call.LOGS, new EnvdException.Unreachable("gone", null));

        assertThat(logs.read(ID, stored(sandbox.pause(PauseMode.WITH_MEMORY, dir))))
                .isEmpty();
    }

    @Test
    void a_state_paused_by_an_earlier_version_is_read_from_the_file_that_version_wrote() throws Exception {
        MockSandbox sandbox = running();
        sandbox.fakeEnvd().failNext(FakeEnvd.Call.LOGS, new EnvdException.Unreachable("gone", null));
        PausedState paused = sandbox.pause(PauseMode.WITH_MEMORY, dir); // keeps nothing of its own
        List<EnvdLogEntry> earlier = List.of(
                new EnvdLogEntry(
                        1,
                        Instant.parse("2026-03-01T10:00:00.123456789Z"),
                        EnvdLogEntry.Source.PROCESS,
                        "INFO",
                        OptionalInt.of(7),
                        "stdout",
                        "written by the orchestrator before the checkpoint\n"),
                new EnvdLogEntry(
                        2,
                        Instant.parse("2026-03-01T10:00:01Z"),
                        EnvdLogEntry.Source.ENVD,
                        "ERROR",
                        OptionalInt.empty(),
                        "envd",
                        "ünïcode"));
        Files.write(dir.resolve(PausedLogs.FILE), legacyFile(earlier));

        assertThat(logs.read(ID, stored(paused))).contains(earlier);
    }

    @Test
    void a_truncated_or_foreign_file_of_an_earlier_version_reads_as_nothing_kept() throws Exception {
        MockSandbox sandbox = running();
        sandbox.fakeEnvd().failNext(FakeEnvd.Call.LOGS, new EnvdException.Unreachable("gone", null));
        PausedState paused = sandbox.pause(PauseMode.WITH_MEMORY, dir);
        byte[] whole = legacyFile(List.of(new EnvdLogEntry(
                1,
                Instant.EPOCH,
                EnvdLogEntry.Source.PROCESS,
                "INFO",
                OptionalInt.of(1),
                "stdout",
                "a line long enough to cut")));

        Files.write(dir.resolve(PausedLogs.FILE), Arrays.copyOf(whole, whole.length - 5));
        assertThat(logs.read(ID, stored(paused))).isEmpty();

        Files.writeString(dir.resolve(PausedLogs.FILE), "not a log file at all");
        assertThat(logs.read(ID, stored(paused))).isEmpty();
    }

    @Test
    void a_state_that_cannot_be_decoded_reads_as_nothing_kept() {
        assertThat(logs.read(ID, new StoredState("not a state".getBytes(java.nio.charset.StandardCharsets.UTF_8), dir)))
                .isEmpty();
    }

    private static byte[] legacyFile(List<EnvdLogEntry> entries) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            PausedLogs.encode(entries, out);
        }
        return bytes.toByteArray();
    }
}
