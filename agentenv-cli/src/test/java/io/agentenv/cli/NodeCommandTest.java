package io.agentenv.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** aenv node: a gateway's node routes. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class NodeCommandTest {
    private static final String NODE = """
            {"nodeID":"n1","status":"ready","address":"http://10.0.0.2:3000","epoch":3,
             "leaseUntil":"2026-12-03T10:00:10Z","registeredAt":"2026-12-03T09:00:00Z","sandboxCount":4,
             "sandboxLimit":100,"metrics":{"cpuCount":2,"cpuLoad":0.5,"memoryTotalBytes":25769803776,
             "memoryAvailableBytes":21474836480},"warmPool":{"base":2},"templates":["base"]}""";

    private CliFixture cli;
    private FakeSandboxServer server;

    @BeforeEach
    void start() throws IOException {
        cli = new CliFixture();
        server = cli.server();
        server.api("GET /nodes", 200, "[" + NODE + "]");
        server.api("GET /nodes/n1", 200, NODE);
        server.api("POST /nodes/n1", 204, "");
        server.api("GET /nodes/nope", 404, "{\"code\":404,\"message\":\"node nope not found\"}");
    }

    @AfterEach
    void stop() {
        cli.close();
    }

    @Test
    void ls_and_info_show_the_nodes_a_gateway_lists() throws IOException {
        assertThat(cli.run("node", "ls")).isZero();
        assertThat(cli.stdout())
                .contains("NODE")
                .contains("n1")
                .contains("ready")
                .contains("4/100")
                .contains("20480 MiB")
                .contains("http://10.0.0.2:3000");
        assertThat(cli.run("-o", "json", "node", "info", "n1")).isZero();
        assertThat(new ObjectMapper()
                        .readTree(cli.stdout().substring(cli.stdout().indexOf('{')))
                        .path("warmPool")
                        .path("base")
                        .asInt())
                .isEqualTo(2);
    }

    @Test
    void drain_and_undrain_post_the_status_with_the_api_key() {
        assertThat(cli.run("node", "drain", "n1")).isZero();
        assertThat(cli.run("node", "undrain", "n1")).isZero();
        var posts =
                server.requests.stream().filter(r -> r.method().equals("POST")).toList();
        assertThat(posts).hasSize(2);
        assertThat(new String(posts.get(0).body(), StandardCharsets.UTF_8)).isEqualTo("{\"status\":\"draining\"}");
        assertThat(new String(posts.get(1).body(), StandardCharsets.UTF_8)).isEqualTo("{\"status\":\"ready\"}");
        assertThat(posts.get(0).header("X-API-Key")).isNotBlank();
    }

    @Test
    void an_unknown_node_is_an_error_naming_it() {
        assertThat(cli.run("node", "info", "nope")).isNotZero();
        assertThat(cli.stderr()).contains("node nope not found");
    }
}
