package io.agentenv.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentenv.spi.TemplateId;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** GET /host, the overview the console's host view shows, on the real server over the mock backend. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class HostRoutesTest {
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

    @Test
    void it_counts_sandboxes_by_state_and_reports_the_backends_slots_and_warm_pool() throws Exception {
        server.backend.keepReady(new TemplateId("base"), 2);
        String running = server.create();
        String paused = server.create();
        assertThat(server.post("/sandboxes/" + paused + "/pause", "{}").statusCode())
                .isEqualTo(204);

        HttpResponse<String> response = server.get("/host");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode host = server.parse(response);
        assertThat(host.get("version").asText()).isNotBlank();
        assertThat(host.get("backend").asText()).isEqualTo("mock");
        assertThat(host.get("uptimeSeconds").asLong()).isGreaterThanOrEqualTo(0);
        assertThat(host.at("/sandboxes/running").asLong()).isEqualTo(1);
        assertThat(host.at("/sandboxes/paused").asLong()).isEqualTo(1);
        // the two ready ids were claimed by the creates; the running sandbox holds the one open instance
        assertThat(host.at("/slots/used").asInt()).isEqualTo(1);
        assertThat(host.at("/slots/total").isNull()).isTrue();
        assertThat(host.get("warmPool")).hasSize(1);
        assertThat(host.at("/warmPool/0/templateID").asText()).isEqualTo("base");
        assertThat(host.at("/warmPool/0/ready").asInt()).isZero();
        assertThat(host.at("/machine/cpuCount").asInt()).isPositive();
        assertThat(host.at("/machine/memTotal").asLong()).isPositive();
        assertThat(host.at("/machine/memFree").asLong())
                .isBetween(0L, host.at("/machine/memTotal").asLong());
        assertThat(running).isNotEqualTo(paused);
    }

    @Test
    void it_needs_the_key() throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(server.base.resolve("/host")).build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(401);
        assertThat(server.parse(response).get("message").asText()).isEqualTo("missing X-API-Key header");
    }
}
