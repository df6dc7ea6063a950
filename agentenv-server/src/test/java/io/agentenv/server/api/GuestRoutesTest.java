package io.agentenv.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentenv.backend.mock.FakeEnvd;
import io.agentenv.backend.mock.MockSandbox;
import io.agentenv.spi.EnvdLogEntry;
import io.agentenv.spi.EnvdMetrics;
import io.agentenv.spi.SandboxId;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Metrics, logs and Prometheus over real HTTP, with the mock backend's FakeEnvd as the guest agent. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class GuestRoutesTest {
    private static final long MIB = 1024L * 1024L;

    @TempDir
    Path dir;

    TestServer server;

    @BeforeEach
    void start() throws Exception {
        server = new TestServer(dir);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    private MockSandbox live(String id) {
        return server.backend.instance(new SandboxId(id)).orElseThrow();
    }

    private int status(HttpResponse<String> response) throws Exception {
        if (response.statusCode() >= 400) {
            assertThat(server.parse(response).get("code").asInt()).isEqualTo(response.statusCode());
        }
        return response.statusCode();
    }

    @Test
    void metrics_of_a_sandbox_come_in_e2bs_shape_with_both_timestamps() throws Exception {
        String id = server.create();
        HttpResponse<String> response = server.get("/sandboxes/" + id + "/metrics");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode items = server.parse(response);
        assertThat(items.isArray()).isTrue();
        assertThat(items).hasSize(1);
        JsonNode m = items.get(0);
        Instant at = Instant.parse(m.get("timestamp").asText());
        assertThat(m.get("timestampUnix").asLong()).isEqualTo(at.getEpochSecond());
        assertThat(m.get("cpuCount").asInt()).isEqualTo(2);
        assertThat(m.get("cpuUsedPct").asDouble()).isEqualTo(1.5);
        assertThat(m.get("memTotal").asLong()).isEqualTo(512 * MIB);
        assertThat(m.get("memUsed").asLong()).isEqualTo(128 * MIB);
        assertThat(m.get("memCache").asLong()).isEqualTo(32 * MIB);
        assertThat(m.get("diskTotal").asLong()).isEqualTo(1024 * MIB);
        assertThat(m.get("diskUsed").asLong()).isEqualTo(128 * MIB);
    }

    @Test
    void metrics_are_filtered_by_start_and_end_in_unix_seconds() throws Exception {
        String id = server.create();
        live(id).fakeEnvd().metrics(clock -> new EnvdMetrics(Instant.ofEpochSecond(5_000), 1, 0, 1, 2, 0, 1, 2));
        String path = "/sandboxes/" + id + "/metrics";
        assertThat(server.parse(server.get(path + "?start=4000&end=6000"))).hasSize(1);
        assertThat(server.parse(server.get(path + "?start=5001"))).isEmpty();
        assertThat(server.parse(server.get(path + "?end=4999"))).isEmpty();
        assertThat(status(server.get(path + "?start=soon"))).isEqualTo(400);
        assertThat(status(server.get(path + "?start=10&end=5"))).isEqualTo(400);
        assertThat(status(server.get(path + "?start=1&start=2"))).isEqualTo(400);
    }

    @Test
    void metrics_of_unknown_or_malformed_sandboxes_are_not_found() throws Exception {
        assertThat(status(server.get("/sandboxes/" + "a".repeat(20) + "/metrics")))
                .isEqualTo(404);
        assertThat(status(server.get("/sandboxes/NOT-AN-ID/metrics"))).isEqualTo(404);
    }

    @Test
    void metrics_of_many_sandboxes_are_keyed_by_id_and_unknown_ids_are_left_out() throws Exception {
        String a = server.create();
        String b = server.create();
        HttpResponse<String> response =
                server.get("/sandboxes/metrics?sandbox_ids=" + a + "," + b + ",bogus," + "z".repeat(20));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode sandboxes = server.parse(response).get("sandboxes");
        assertThat(sandboxes.properties())
                .extracting(java.util.Map.Entry::getKey)
                .containsExactlyInAnyOrder(a, b);
        assertThat(sandboxes.get(a).get("cpuCount").asInt()).isEqualTo(2);
        assertThat(sandboxes.get(a).has("timestamp")).isTrue();

        assertThat(status(server.get("/sandboxes/metrics"))).isEqualTo(400);
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 101; i++) {
            many.add(String.format("%020d", i));
        }
        assertThat(status(server.get("/sandboxes/metrics?sandbox_ids=" + String.join(",", many))))
                .isEqualTo(400);
    }

    @Test
    void v2_logs_page_forward_and_backward_with_level_and_search() throws Exception {
        String id = server.create();
        FakeEnvd envd = live(id).fakeEnvd();
        envd.log(EnvdLogEntry.Source.ENVD, "INFO", OptionalInt.empty(), "io.agentenv.envd.Main", "envd started");
        for (int i = 0; i < 5; i++) {
            envd.log(EnvdLogEntry.Source.PROCESS, i == 3 ? "ERROR" : "INFO", OptionalInt.of(42), "stdout", "out " + i);
        }
        String path = "/v2/sandboxes/" + id + "/logs";

        JsonNode first = server.parse(server.get(path + "?limit=2")).get("logs");
        assertThat(first).extracting(n -> n.get("message").asText()).containsExactly("envd started", "out 0");
        assertThat(first.get(0).get("level").asText()).isEqualTo("info");
        assertThat(first.get(0).get("fields").get("source").asText()).isEqualTo("envd");
        assertThat(first.get(0).get("fields").get("logger").asText()).isEqualTo("io.agentenv.envd.Main");
        assertThat(first.get(1).get("fields").get("pid").asText()).isEqualTo("42");
        assertThat(first.get(1).get("fields").get("stream").asText()).isEqualTo("stdout");

        // the next page: forward from the last timestamp seen (entries at that instant repeat; clients skip them)
        long cursor = Instant.parse(first.get(1).get("timestamp").asText()).toEpochMilli();
        JsonNode next =
                server.parse(server.get(path + "?limit=10&cursor=" + cursor)).get("logs");
        assertThat(next).extracting(n -> n.get("message").asText()).contains("out 1", "out 4");

        JsonNode newest =
                server.parse(server.get(path + "?limit=2&direction=backward")).get("logs");
        assertThat(newest).extracting(n -> n.get("message").asText()).containsExactly("out 4", "out 3");

        JsonNode errors = server.parse(server.get(path + "?level=error")).get("logs");
        assertThat(errors).extracting(n -> n.get("message").asText()).containsExactly("out 3");
        JsonNode found = server.parse(server.get(path + "?search=out%202")).get("logs");
        assertThat(found).extracting(n -> n.get("message").asText()).containsExactly("out 2");

        assertThat(status(server.get(path + "?direction=sideways"))).isEqualTo(400);
        assertThat(status(server.get(path + "?level=loud"))).isEqualTo(400);
        assertThat(status(server.get(path + "?limit=0"))).isEqualTo(400);
        assertThat(status(server.get(path + "?limit=1001"))).isEqualTo(400);
    }

    @Test
    void v1_logs_answer_lines_and_structured_entries_from_start() throws Exception {
        String id = server.create();
        FakeEnvd envd = live(id).fakeEnvd();
        envd.log(EnvdLogEntry.Source.PROCESS, "INFO", OptionalInt.of(7), "stderr", "warning: x");
        JsonNode body = server.parse(server.get("/sandboxes/" + id + "/logs?start=0&limit=10"));
        assertThat(body.get("logs")).extracting(n -> n.get("line").asText()).containsExactly("warning: x");
        assertThat(body.get("logEntries"))
                .extracting(n -> n.get("fields").get("stream").asText())
                .containsExactly("stderr");
        long future = Instant.now().plusSeconds(3600).toEpochMilli();
        assertThat(server.parse(server.get("/sandboxes/" + id + "/logs?start=" + future))
                        .get("logs"))
                .isEmpty();
    }

    @Test
    void paused_logs_are_those_kept_at_pause_and_without_a_guest_agent_a_bad_gateway() throws Exception {
        String paused = server.create();
        live(paused).fakeEnvd().log(EnvdLogEntry.Source.PROCESS, "INFO", OptionalInt.of(3), "stdout", "kept line");
        assertThat(server.post("/sandboxes/" + paused + "/pause", "").statusCode())
                .isEqualTo(204);
        HttpResponse<String> v2 = server.get("/v2/sandboxes/" + paused + "/logs");
        assertThat(status(v2)).isEqualTo(200);
        assertThat(server.parse(v2).get("logs"))
                .extracting(n -> n.get("message").asText())
                .containsExactly("kept line");
        JsonNode v1 = server.parse(server.get("/sandboxes/" + paused + "/logs?start=0"));
        assertThat(v1.get("logs")).extracting(n -> n.get("line").asText()).containsExactly("kept line");

        String cut = server.create();
        live(cut).disconnectGuest();
        HttpResponse<String> response = server.get("/v2/sandboxes/" + cut + "/logs");
        assertThat(status(response)).isEqualTo(502);
        assertThat(server.parse(response).get("message").asText()).isEqualTo("sandbox guest agent is not connected");
    }

    @Test
    void prometheus_shows_state_gauges_lifecycle_events_and_operation_latency() throws Exception {
        String id = server.create();
        server.create();
        assertThat(server.post("/sandboxes/" + id + "/pause", "").statusCode()).isEqualTo(204);

        String text = server.get("/metrics").body();
        assertThat(text)
                .contains(
                        "aenv_sandboxes_running 1\n",
                        "aenv_sandboxes_paused 1\n",
                        "aenv_sandboxes_transitioning 0\n",
                        "aenv_operation_duration_seconds_count{operation=\"create\",outcome=\"ok\"} 2\n",
                        "aenv_operation_duration_seconds_bucket{operation=\"pause\",outcome=\"ok\",le=\"+Inf\"} 1\n",
                        "# TYPE aenv_operation_duration_seconds histogram\n");
        Instant deadline = Instant.now().plusSeconds(10);
        while (!text.contains("aenv_lifecycle_events_total{event=\"paused\"} 1\n")) {
            assertThat(Instant.now()).as("the Paused event is counted").isBefore(deadline);
            text = server.get("/metrics").body();
        }
        assertThat(text).contains("aenv_lifecycle_events_total{event=\"created\"} 2\n");
    }
}
