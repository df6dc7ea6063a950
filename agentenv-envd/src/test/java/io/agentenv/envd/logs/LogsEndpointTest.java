package io.agentenv.envd.logs;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.agentenv.envd.http.Access;
import io.agentenv.envd.session.InitRequest;
import io.agentenv.envd.session.Session;
import io.agentenv.envd.testing.TestEnvd;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class LogsEndpointTest {
    private final LogJournal journal = new LogJournal(Clock.systemUTC(), 1 << 16);
    private TestEnvd envd;

    @BeforeEach
    void start() throws Exception {
        Session session = new Session(Clock.systemUTC());
        envd = TestEnvd.start(
                session,
                Optional.empty(),
                (rpcs, routes) -> routes.add("GET", "/logs", Access.TOKEN, new LogsEndpoint(journal)));
        journal.envd("INFO", "io.agentenv.envd.Main", "envd ready port=49983");
        journal.processEvent(42, "started as user: /bin/bash -l -c echo hi");
        byte[] out = "hi\n".getBytes(UTF_8);
        journal.processOutput(42, "stdout", out, out.length);
    }

    @AfterEach
    void stop() throws Exception {
        envd.close();
    }

    private JsonObject get(String query) throws Exception {
        HttpResponse<byte[]> response = envd.client().get("/logs" + query, Map.of());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("content-type")).contains("application/json");
        return JsonParser.parseString(new String(response.body(), UTF_8)).getAsJsonObject();
    }

    @Test
    void entries_come_oldest_first_with_their_source_stream_and_pid() throws Exception {
        JsonObject page = get("");

        assertThat(page.getAsJsonArray("entries")).hasSize(3);
        JsonObject envdLine = page.getAsJsonArray("entries").get(0).getAsJsonObject();
        assertThat(envdLine.get("source").getAsString()).isEqualTo("envd");
        assertThat(envdLine.get("stream").getAsString()).isEqualTo("io.agentenv.envd.Main");
        assertThat(envdLine.has("pid")).isFalse();
        JsonObject output = page.getAsJsonArray("entries").get(2).getAsJsonObject();
        assertThat(output.get("source").getAsString()).isEqualTo("process");
        assertThat(output.get("pid").getAsInt()).isEqualTo(42);
        assertThat(output.get("stream").getAsString()).isEqualTo("stdout");
        assertThat(output.get("message").getAsString()).isEqualTo("hi\n");
        assertThat(output.get("timestamp").getAsString()).endsWith("Z");
        assertThat(page.get("nextCursor").getAsLong()).isEqualTo(4);
        assertThat(page.get("firstAvailable").getAsLong()).isEqualTo(1);
    }

    @Test
    void a_cursor_and_a_limit_page_through_and_pid_filters() throws Exception {
        JsonObject first = get("?limit=2");
        assertThat(first.getAsJsonArray("entries")).hasSize(2);
        JsonObject rest = get("?cursor=" + first.get("nextCursor").getAsLong());
        assertThat(rest.getAsJsonArray("entries")).hasSize(1);
        assertThat(get("?pid=42").getAsJsonArray("entries")).hasSize(2);
        assertThat(get("?cursor=4").getAsJsonArray("entries")).isEmpty();
    }

    @Test
    void bad_parameters_are_400_and_the_token_is_required_once_set() throws Exception {
        assertThat(envd.client().get("/logs?limit=0", Map.of()).statusCode()).isEqualTo(400);
        assertThat(envd.client().get("/logs?cursor=abc", Map.of()).statusCode()).isEqualTo(400);

        envd.session()
                .init(new InitRequest(
                        Optional.of("tok"), Map.of(), Optional.empty(), Optional.empty(), Optional.empty()));

        assertThat(envd.client().get("/logs", Map.of()).statusCode()).isEqualTo(401);
        assertThat(envd.client().get("/logs", Map.of("X-Access-Token", "tok")).statusCode())
                .isEqualTo(200);
    }
}
