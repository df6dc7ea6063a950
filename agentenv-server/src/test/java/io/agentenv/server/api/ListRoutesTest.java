package io.agentenv.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The list routes: pagination, state, metadata (as the SDK encodes it), order and the other filters. */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ListRoutesTest {
    @TempDir
    Path dataDir;

    private TestServer server;

    @BeforeEach
    void start() throws Exception {
        server = new TestServer(dataDir);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    /** What SDK 2.51 sends: encodeURIComponent per key and value, URLSearchParams join, then the client encodes it again. */
    private static String sdkMetadataQuery(Map<String, String> metadata) {
        String joined = metadata.entrySet().stream()
                .map(e -> searchParam(jsEncode(e.getKey())) + "=" + searchParam(jsEncode(e.getValue())))
                .collect(Collectors.joining("&"));
        return jsEncode(joined);
    }

    private static String jsEncode(String s) { // encodeURIComponent
        return URLEncoder.encode(s, StandardCharsets.UTF_8)
                .replace("+", "%20")
                .replace("%21", "!")
                .replace("%27", "'")
                .replace("%28", "(")
                .replace("%29", ")")
                .replace("%7E", "~");
    }

    private static String searchParam(String s) { // URLSearchParams serialisation of an already-encoded value
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private List<String> ids(HttpResponse<String> response) throws Exception {
        List<String> ids = new ArrayList<>();
        for (JsonNode item : server.parse(response)) {
            ids.add(item.get("sandboxID").asText());
        }
        return ids;
    }

    @Test
    void two_sandboxes_with_limit_one_are_two_pages_newest_first_with_no_last_token() throws Exception {
        String older = server.create();
        String newer = server.create();

        HttpResponse<String> first = server.get("/v2/sandboxes?limit=1");
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(ids(first)).containsExactly(newer);
        String token = first.headers().firstValue("x-next-token").orElseThrow();

        HttpResponse<String> second = server.get("/v2/sandboxes?limit=1&nextToken=" + token);
        assertThat(ids(second)).containsExactly(older);
        assertThat(second.headers().firstValue("x-next-token")).isEmpty();
    }

    @Test
    void order_asc_lists_oldest_first_and_a_full_page_has_no_token() throws Exception {
        String older = server.create();
        String newer = server.create();
        HttpResponse<String> response = server.get("/v2/sandboxes?order=asc");
        assertThat(ids(response)).containsExactly(older, newer);
        assertThat(response.headers().firstValue("x-next-token")).isEmpty();
    }

    @Test
    void metadata_filters_decode_the_sdks_triple_encoding_of_spaces_ampersands_and_equals() throws Exception {
        Map<String, String> tricky = new LinkedHashMap<>();
        tricky.put("user name", "a b&c=d");
        tricky.put("k", "100% sure");
        String metadataJson = server.json.writeValueAsString(tricky);
        String match = server.create("{\"templateID\":\"base\",\"metadata\":" + metadataJson + "}");
        server.create("{\"templateID\":\"base\",\"metadata\":{\"user name\":\"someone else\",\"k\":\"100% sure\"}}");

        String query = sdkMetadataQuery(tricky);
        assertThat(ids(server.get("/v2/sandboxes?metadata=" + query))).containsExactly(match);
        // AND semantics: one matching pair is not enough
        assertThat(ids(server.get("/v2/sandboxes?metadata=" + sdkMetadataQuery(Map.of("k", "100% sure")))))
                .hasSize(2);
        assertThat(ids(server.get("/v2/sandboxes?metadata=" + sdkMetadataQuery(Map.of("k", "100% sure", "x", "y")))))
                .isEmpty();
        // the deprecated v1 list uses the same filter
        assertThat(ids(server.get("/sandboxes?metadata=" + query))).containsExactly(match);
    }

    @Test
    void state_filters_running_and_paused_and_absent_means_both() throws Exception {
        String running = server.create();
        String paused = server.create();
        assertThat(server.post("/sandboxes/" + paused + "/pause", "").statusCode())
                .isEqualTo(204);

        assertThat(ids(server.get("/v2/sandboxes?state=running"))).containsExactly(running);
        HttpResponse<String> onlyPaused = server.get("/v2/sandboxes?state=paused");
        assertThat(ids(onlyPaused)).containsExactly(paused);
        assertThat(server.parse(onlyPaused).get(0).get("state").asText()).isEqualTo("paused");
        assertThat(ids(server.get("/v2/sandboxes?state=running,paused"))).containsExactlyInAnyOrder(running, paused);
        assertThat(ids(server.get("/v2/sandboxes"))).containsExactlyInAnyOrder(running, paused);
        // the deprecated v1 list shows running sandboxes only
        assertThat(ids(server.get("/sandboxes"))).containsExactly(running);
    }

    @Test
    void killed_sandboxes_are_not_listed() throws Exception {
        String killed = server.create();
        String alive = server.create();
        server.delete("/sandboxes/" + killed);
        assertThat(ids(server.get("/v2/sandboxes?state=running"))).containsExactly(alive);
    }

    @Test
    void template_and_started_after_filter() throws Exception {
        String id = server.create();
        assertThat(ids(server.get("/v2/sandboxes?template=base"))).containsExactly(id);
        assertThat(ids(server.get("/v2/sandboxes?template=other"))).isEmpty();
        assertThat(ids(server.get("/v2/sandboxes?startedAfter=2000-01-01T00:00:00.000Z")))
                .containsExactly(id);
        assertThat(ids(server.get("/v2/sandboxes?startedAfter=2999-01-01T00:00:00.000Z")))
                .isEmpty();
    }

    @Test
    void listed_sandboxes_carry_the_fields_the_sdk_reads() throws Exception {
        String id = server.create("{\"templateID\":\"base\",\"metadata\":{\"a\":\"b\"}}");
        JsonNode item = server.parse(server.get("/v2/sandboxes")).get(0);
        assertThat(item.get("sandboxID").asText()).isEqualTo(id);
        for (String field : List.of(
                "templateID",
                "clientID",
                "startedAt",
                "endAt",
                "cpuCount",
                "memoryMB",
                "diskSizeMB",
                "metadata",
                "state",
                "envdVersion")) {
            assertThat(item.has(field)).as(field).isTrue();
        }
    }

    @Test
    void bad_list_parameters_are_400() throws Exception {
        for (String query : List.of(
                "limit=0",
                "limit=101",
                "limit=ten",
                "order=sideways",
                "state=gone",
                "startedAfter=yesterday",
                "nextToken=%25%25",
                "nextToken=bm90LWEtdG9rZW4",
                "metadata=novalue")) {
            HttpResponse<String> response = server.get("/v2/sandboxes?" + query);
            assertThat(response.statusCode()).as(query + ": " + response.body()).isEqualTo(400);
            assertThat(server.parse(response).get("code").asInt()).isEqualTo(400);
        }
    }
}
