package io.agentenv.envd.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentenv.envd.http.RestJson;
import io.agentenv.envd.protocol.rest.EntryInfo;
import io.agentenv.envd.protocol.rest.ErrorBody;
import io.agentenv.envd.protocol.rest.InitBody;
import io.agentenv.envd.protocol.rest.LogEntry;
import io.agentenv.envd.protocol.rest.LogPage;
import io.agentenv.envd.protocol.rest.Metrics;
import io.agentenv.envd.session.InitRequest;
import io.agentenv.spi.AccessToken;
import io.agentenv.spi.EnvdInit;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.EnvdLogPage;
import io.agentenv.spi.EnvdMetrics;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/**
 * envd's REST contract: each payload as envd serialises it (its {@link RestJson}, on gson) is the exact JSON pinned
 * here, the host's Jackson reads it back into the same agentenv-envd-protocol record, and Jackson writes that record
 * to the same bytes. The field names, their casing and order, and the left-out nulls are what the E2B SDK relies on.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class RestContractTest {
    private static <T> T roundTrip(String envdJson, String pinned, Class<T> type, T expected) throws Exception {
        assertThat(envdJson).isEqualTo(pinned);
        T parsed = EnvdWire.JSON.readValue(envdJson, type);
        assertThat(parsed).isEqualTo(expected);
        assertThat(EnvdWire.JSON.writeValueAsString(parsed)).isEqualTo(pinned);
        return parsed;
    }

    @Test
    void metrics() throws Exception {
        Metrics sent = Metrics.of(1764417600, 2, 12.5, 1024L * 1024 * 1024, 400L * 1024 * 1024, 50, 7000, 10000);
        String pinned = "{\"ts\":1764417600,\"cpu_count\":2,\"cpu_used_pct\":12.5,\"mem_total\":1073741824,"
                + "\"mem_used\":419430400,\"mem_cache\":50,\"mem_total_mib\":1024,\"mem_used_mib\":400,"
                + "\"disk_used\":7000,\"disk_total\":10000}";
        roundTrip(RestJson.metrics(sent), pinned, Metrics.class, sent);

        EnvdMetrics host = EnvdWire.metrics(pinned.getBytes(StandardCharsets.UTF_8));
        assertThat(host)
                .isEqualTo(new EnvdMetrics(
                        Instant.ofEpochSecond(1764417600),
                        2,
                        12.5,
                        400L * 1024 * 1024,
                        1024L * 1024 * 1024,
                        50,
                        7000,
                        10000));
    }

    @Test
    void a_log_page_leaves_out_the_pid_of_envd_s_own_lines() throws Exception {
        LogPage sent = new LogPage(
                List.of(
                        new LogEntry(
                                7,
                                "2026-12-01T21:00:00.123Z",
                                LogEntry.SOURCE_ENVD,
                                "INFO",
                                null,
                                "io.agentenv.envd.Main",
                                "envd \"ready\" <&> \u2028"),
                        new LogEntry(8, "2026-12-01T21:00:01Z", LogEntry.SOURCE_PROCESS, "INFO", 42, "stdout", "hi\n")),
                9,
                3);
        String pinned = "{\"entries\":[{\"seq\":7,\"timestamp\":\"2026-12-01T21:00:00.123Z\",\"source\":\"envd\","
                + "\"level\":\"INFO\",\"stream\":\"io.agentenv.envd.Main\",\"message\":\"envd \\\"ready\\\" <&> \\u2028\"},"
                + "{\"seq\":8,\"timestamp\":\"2026-12-01T21:00:01Z\",\"source\":\"process\",\"level\":\"INFO\","
                + "\"pid\":42,\"stream\":\"stdout\",\"message\":\"hi\\n\"}],\"nextCursor\":9,\"firstAvailable\":3}";
        String envdJson = RestJson.logPage(sent);
        assertThat(envdJson).isEqualTo(pinned);
        assertThat(EnvdWire.JSON.readValue(envdJson, LogPage.class)).isEqualTo(sent);
        // gson escapes U+2028 and Jackson does not: the same string either way, which is what the contract is
        JsonNode reread = EnvdWire.JSON.readTree(EnvdWire.JSON.writeValueAsString(sent));
        assertThat(reread).isEqualTo(EnvdWire.JSON.readTree(pinned));

        EnvdLogPage host = EnvdWire.logs(pinned.getBytes(StandardCharsets.UTF_8));
        assertThat(host.entries())
                .containsExactly(
                        new EnvdLogEntry(
                                7,
                                Instant.parse("2026-12-01T21:00:00.123Z"),
                                EnvdLogEntry.Source.ENVD,
                                "INFO",
                                OptionalInt.empty(),
                                "io.agentenv.envd.Main",
                                "envd \"ready\" <&> \u2028"),
                        new EnvdLogEntry(
                                8,
                                Instant.parse("2026-12-01T21:00:01Z"),
                                EnvdLogEntry.Source.PROCESS,
                                "INFO",
                                OptionalInt.of(42),
                                "stdout",
                                "hi\n"));
        assertThat(host.nextCursor()).isEqualTo(9);
        assertThat(host.firstAvailable()).isEqualTo(3);
    }

    @Test
    void a_journal_line_is_one_entry() throws Exception {
        LogEntry sent = new LogEntry(1, "2026-12-01T21:00:00Z", LogEntry.SOURCE_PROCESS, "ERROR", 5, "stderr", "x");
        roundTrip(
                RestJson.logEntry(sent),
                "{\"seq\":1,\"timestamp\":\"2026-12-01T21:00:00Z\",\"source\":\"process\","
                        + "\"level\":\"ERROR\",\"pid\":5,\"stream\":\"stderr\",\"message\":\"x\"}",
                LogEntry.class,
                sent);
    }

    @Test
    void written_files_leave_out_empty_metadata_and_sort_the_rest() throws Exception {
        Map<String, String> metadata = new LinkedHashMap<>();
        metadata.put("b", "2");
        metadata.put("a", "1");
        List<EntryInfo> sent = List.of(
                new EntryInfo("/home/user/a.txt", "a.txt", EntryInfo.FILE, Map.of()),
                new EntryInfo("/", "/", EntryInfo.FILE, metadata));
        String pinned = "[{\"path\":\"/home/user/a.txt\",\"name\":\"a.txt\",\"type\":\"file\"},"
                + "{\"path\":\"/\",\"name\":\"/\",\"type\":\"file\",\"metadata\":{\"a\":\"1\",\"b\":\"2\"}}]";
        String envdJson = RestJson.entries(sent);
        assertThat(envdJson).isEqualTo(pinned);
        EntryInfo[] parsed = EnvdWire.JSON.readValue(envdJson, EntryInfo[].class);
        assertThat(parsed).containsExactlyElementsOf(sent);
        assertThat(parsed[0].metadataOrEmpty()).isEmpty();
        assertThat(EnvdWire.JSON.writeValueAsString(parsed)).isEqualTo(pinned);
    }

    @Test
    void error_body() throws Exception {
        ErrorBody sent = new ErrorBody(404, "path not found: /nope");
        roundTrip(RestJson.error(sent), "{\"code\":404,\"message\":\"path not found: /nope\"}", ErrorBody.class, sent);
    }

    @Test
    void the_host_s_init_body_is_what_envd_reads() throws Exception {
        EnvdInit init = new EnvdInit(
                Optional.of(new AccessToken("tok")),
                Map.of("A", "1"),
                Optional.of("user"),
                Optional.empty(),
                Instant.parse("2026-12-01T21:00:00Z"));
        String pinned = "{\"accessToken\":\"tok\",\"envVars\":{\"A\":\"1\"},\"defaultUser\":\"user\","
                + "\"timestamp\":\"2026-12-01T21:00:00Z\"}";
        String hostJson = EnvdWire.init(init);
        assertThat(hostJson).isEqualTo(pinned);
        assertThat(EnvdWire.JSON.readValue(hostJson, InitBody.class)).isEqualTo(EnvdWire.initBody(init));

        InitRequest read = InitRequest.from(EnvdWire.JSON.readValue(hostJson, InitBody.class));
        assertThat(read.accessToken()).contains("tok");
        assertThat(read.envVars()).isEqualTo(Map.of("A", "1"));
        assertThat(read.defaultUser()).contains("user");
        assertThat(read.defaultWorkdir()).isEmpty();
        assertThat(read.timestamp()).contains(Instant.parse("2026-12-01T21:00:00Z"));
    }
}
