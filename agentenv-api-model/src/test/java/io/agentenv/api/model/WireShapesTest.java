package io.agentenv.api.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class WireShapesTest {
    private final ObjectMapper json = new ObjectMapper()
            .registerModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    @Test
    void a_v2_create_body_reads_snake_case_internet_access_and_ignores_unknown_fields() throws Exception {
        // given
        String body = """
                {"templateID":"base","metadata":{"a":"b"},"envVars":{"FOO":"bar"},"allow_internet_access":false,
                 "mcp":null,"iam":{"tokens":{}},"autoPauseMemory":false,"network":{"allowOut":["1.1.1.1"],"maskRequestHost":"x"}}""";
        // when
        NewSandboxV2 req = json.readValue(body, NewSandboxV2.class);
        // then
        assertThat(req.templateID()).isEqualTo("base");
        assertThat(req.allowInternetAccess()).isFalse();
        assertThat(req.metadata()).containsEntry("a", "b");
        assertThat(req.network().allowOut()).containsExactly("1.1.1.1");
        assertThat(req.timeoutOrDefault()).isEqualTo(300);
        assertThat(req.secureOrDefault()).isTrue();
        assertThat(req.autoPauseOrDefault()).isFalse();
        assertThat(req.autoPauseMemoryOrDefault()).isFalse();
    }

    @Test
    void a_v1_create_body_defaults_to_fifteen_seconds_and_reads_secure() throws Exception {
        NewSandbox req = json.readValue("{\"templateID\":\"base\",\"secure\":true}", NewSandbox.class);
        assertThat(req.timeoutOrDefault()).isEqualTo(15);
        assertThat(req.secureOrDefault()).isTrue();
    }

    @Test
    void both_create_bodies_write_shared_fields_at_the_top_level_and_read_back_equal() throws Exception {
        NewSandboxV2 v2 = new NewSandboxV2(
                "base",
                60,
                true,
                false,
                new AutoResume(true),
                false,
                null,
                Map.of("a", "b"),
                Map.of("FOO", "bar"),
                Map.of("k", 1));
        JsonNode written = json.valueToTree(v2);
        assertThat(written.has("fields")).isFalse();
        assertThat(written.get("templateID").asText()).isEqualTo("base");
        assertThat(written.get("allow_internet_access").asBoolean()).isFalse();
        assertThat(written.get("autoPauseMemory").asBoolean()).isFalse();
        assertThat(written.get("envVars").get("FOO").asText()).isEqualTo("bar");
        assertThat(json.treeToValue(written, NewSandboxV2.class)).isEqualTo(v2);

        NewSandbox v1 = json.readValue("""
                {"templateID":"base","timeout":7,"secure":false,"autoPause":true,"metadata":{"m":"n"},"mcp":{"x":1}}""", NewSandbox.class);
        assertThat(v1.secureOrDefault()).isFalse();
        assertThat(v1.timeoutOrDefault()).isEqualTo(7);
        assertThat(v1.autoPauseOrDefault()).isTrue();
        assertThat(v1.metadata()).containsExactly(Map.entry("m", "n"));
        assertThat(json.treeToValue(json.valueToTree(v1), NewSandbox.class)).isEqualTo(v1);
    }

    @Test
    void a_create_body_with_a_negative_timeout_or_null_env_var_is_refused_naming_it() {
        assertThatThrownBy(() -> json.readValue("{\"templateID\":\"base\",\"timeout\":-1}", NewSandbox.class))
                .hasRootCauseMessage("timeout must be >= 0, was -1");
        assertThatThrownBy(
                        () -> json.readValue("{\"templateID\":\"base\",\"envVars\":{\"A\":null}}", NewSandboxV2.class))
                .hasRootCauseMessage("envVars must map strings to strings (entry A is null)");
    }

    @Test
    void a_create_body_without_a_template_is_rejected_naming_the_field() {
        assertThatThrownBy(() -> json.readValue("{\"timeout\":5}", NewSandboxV2.class))
                .isInstanceOf(ValueInstantiationException.class)
                .hasRootCauseMessage("templateID is required");
    }

    @Test
    void a_fork_count_outside_one_to_one_hundred_is_rejected() {
        assertThatThrownBy(() -> json.readValue("{\"count\":0}", SandboxForkRequest.class))
                .hasRootCauseMessage("count must be between 1 and 100, was 0");
        assertThatThrownBy(() -> json.readValue("{\"count\":101}", SandboxForkRequest.class))
                .hasRootCauseMessage("count must be between 1 and 100, was 101");
    }

    @Test
    void a_sandbox_always_carries_domain_and_traffic_token_but_omits_absent_alias() throws Exception {
        Sandbox sandbox = new Sandbox("base", "abcdefghij0123456789", null, "", "0.6.13", "tok", null, null);
        JsonNode node = json.valueToTree(sandbox);
        assertThat(node.has("domain")).isTrue();
        assertThat(node.get("domain").isNull()).isTrue();
        assertThat(node.has("trafficAccessToken")).isTrue();
        assertThat(node.has("alias")).isFalse();
        assertThat(node.get("sandboxID").asText()).isEqualTo("abcdefghij0123456789");
        assertThat(node.get("templateID").asText()).isEqualTo("base");
        assertThat(node.get("clientID").asText()).isEmpty();
        assertThat(sandbox.toString()).doesNotContain("tok");
    }

    @Test
    void create_bodies_read_volume_mounts_by_name_with_an_optional_read_only() throws Exception {
        NewSandboxV2 body = json.readValue(
                "{\"templateID\":\"base\",\"volumeMounts\":[{\"name\":\"data\",\"path\":\"/data\"},"
                        + "{\"name\":\"models\",\"path\":\"/m\",\"readOnly\":true}]}",
                NewSandboxV2.class);
        assertThat(body.volumeMounts())
                .containsExactly(
                        new SandboxVolumeMount("data", "/data", null), new SandboxVolumeMount("models", "/m", true));
        assertThat(body.volumeMounts().get(0).readOnlyOrDefault()).isFalse();
        assertThat(body.volumeMounts().get(1).readOnlyOrDefault()).isTrue();
        assertThatThrownBy(() -> json.readValue(
                        "{\"templateID\":\"base\",\"volumeMounts\":[{\"path\":\"/data\"}]}", NewSandboxV2.class))
                .hasMessageContaining("volumeMounts[].name is required");
    }

    @Test
    void a_sandbox_detail_uses_camel_case_internet_access_and_iso_timestamps() throws Exception {
        SandboxDetail detail = new SandboxDetail(
                "base",
                null,
                "abcdefghij0123456789",
                "",
                Instant.parse("2026-01-01T00:00:00Z"),
                Instant.parse("2026-01-01T00:05:00Z"),
                "0.6.13",
                null,
                null,
                2,
                1024,
                4096,
                Map.of("k", "v"),
                SandboxState.PAUSED,
                null,
                null,
                new SandboxLifecycle(false, OnTimeout.KILL),
                List.of(
                        new SandboxVolumeMount("data", "/data", null),
                        new SandboxVolumeMount("models", "/models", true)));
        JsonNode node = json.valueToTree(detail);
        assertThat(node.get("volumeMounts").toString())
                .isEqualTo("[{\"name\":\"data\",\"path\":\"/data\"},"
                        + "{\"name\":\"models\",\"path\":\"/models\",\"readOnly\":true}]");
        assertThat(node.get("startedAt").asText()).isEqualTo("2026-01-01T00:00:00Z");
        assertThat(node.get("state").asText()).isEqualTo("paused");
        assertThat(node.has("allowInternetAccess")).isTrue();
        assertThat(node.has("allow_internet_access")).isFalse();
        assertThat(node.get("memoryMB").asInt()).isEqualTo(1024);
        assertThat(node.get("diskSizeMB").asInt()).isEqualTo(4096);
        assertThat(node.get("lifecycle").get("onTimeout").asText()).isEqualTo("kill");
        assertThat(node.has("network")).isFalse();
    }

    @Test
    void a_fork_result_holds_exactly_one_of_sandbox_and_error() throws Exception {
        JsonNode node = json.valueToTree(List.of(SandboxForkResult.of(new ApiError(409, "not running"))));
        assertThat(node.get(0).get("error").get("code").asInt()).isEqualTo(409);
        assertThat(node.get(0).has("sandbox")).isFalse();
        assertThatThrownBy(() -> new SandboxForkResult(null, null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void a_network_update_reads_snake_case_internet_access() throws Exception {
        SandboxNetworkUpdateConfig cfg = json.readValue(
                "{\"allowOut\":[\"10.0.0.0/8\"],\"allow_internet_access\":true}", SandboxNetworkUpdateConfig.class);
        assertThat(cfg.allowInternetAccess()).isTrue();
        assertThat(cfg.denyOut()).isNull();
    }
}
