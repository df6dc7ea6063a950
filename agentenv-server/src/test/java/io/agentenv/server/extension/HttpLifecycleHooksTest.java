package io.agentenv.server.extension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.orchestrator.Hook;
import io.agentenv.orchestrator.HookException;
import io.agentenv.orchestrator.HookStart;
import io.agentenv.spi.HostNetwork;
import io.agentenv.spi.SandboxId;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class HttpLifecycleHooksTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final SandboxId ID = new SandboxId("abcdefghij0123456789");
    private static final UUID INSTANCE = UUID.fromString("01939b6e-7a3c-7def-8abc-0123456789ab");

    private final HttpClient http = HttpClient.newHttpClient();
    private FakeExtensionServer extension;
    private HttpLifecycleHooks hooks;

    @BeforeEach
    void start() throws Exception {
        extension = FakeExtensionServer.start();
        hooks = extension.hooks(http, Duration.ofMillis(500));
    }

    @AfterEach
    void stop() {
        extension.close();
        http.shutdownNow();
    }

    private static HookStart start(String params) throws Exception {
        return new HookStart(
                ID,
                INSTANCE,
                Optional.of(new HostNetwork(Path.of("/var/run/netns/aenv-ns-3"), InetAddress.getByName("10.11.0.7"))),
                params);
    }

    @Test
    void start_fresh_posts_the_documented_fields_and_returns_the_boot_args() throws Exception {
        extension.script(Hook.START_FRESH, FakeExtensionServer.reply(200, "{\"extraBootArgs\":\"vpn=on quiet\"}"));

        Optional<String> args = hooks.startFresh(start("{\"vpn\":{\"region\":\"eu\"}}"));

        assertThat(args).contains("vpn=on quiet");
        FakeExtensionServer.Call call = extension.calls(Hook.START_FRESH).getFirst();
        assertThat(call.text("sandboxId")).isEqualTo(ID.value());
        assertThat(call.text("sandboxInstanceId")).isEqualTo(INSTANCE.toString());
        assertThat(call.text("networkNamespacePath")).isEqualTo("/var/run/netns/aenv-ns-3");
        assertThat(call.text("hostInteractionIp")).isEqualTo("10.11.0.7");
        assertThat(call.body()
                        .get("customExtensionParams")
                        .get("vpn")
                        .get("region")
                        .asText())
                .isEqualTo("eu");
    }

    @Test
    void start_fresh_without_boot_args_or_with_null_or_blank_ones_gives_none() throws Exception {
        extension.script(
                Hook.START_FRESH,
                FakeExtensionServer.reply(200, "{}"),
                FakeExtensionServer.reply(200, "{\"extraBootArgs\":null}"),
                FakeExtensionServer.reply(201, "{\"extraBootArgs\":\"  \"}"));

        assertThat(hooks.startFresh(start("{}"))).isEmpty();
        assertThat(hooks.startFresh(start("{}"))).isEmpty();
        assertThat(hooks.startFresh(start("{}"))).isEmpty();
    }

    @Test
    void a_sandbox_without_a_host_network_sends_null_network_fields() throws Exception {
        hooks.startResume(new HookStart(ID, INSTANCE, Optional.empty(), "{}"));

        FakeExtensionServer.Call call = extension.calls(Hook.START_RESUME).getFirst();
        assertThat(call.body().get("networkNamespacePath").isNull()).isTrue();
        assertThat(call.body().get("hostInteractionIp").isNull()).isTrue();
        assertThat(call.body().get("customExtensionParams").isObject()).isTrue();
    }

    @Test
    void a_4xx_answer_is_a_rejection_that_keeps_the_hook_status_and_body() throws Exception {
        extension.script(Hook.START_RESUME, FakeExtensionServer.reply(403, "{\"error\":\"vpn quota exhausted\"}"));

        assertThatThrownBy(() -> hooks.startResume(start("{}"))).isInstanceOfSatisfying(HookException.class, e -> {
            assertThat(e.hook()).isEqualTo(Hook.START_RESUME);
            assertThat(e.failure()).isEqualTo(HookException.Failure.REJECTED);
            assertThat(e.rejected()).isTrue();
            assertThat(e.status()).hasValue(403);
            assertThat(e.body()).contains("{\"error\":\"vpn quota exhausted\"}");
            assertThat(e.getMessage())
                    .contains("start-resume", "403", "vpn quota exhausted")
                    .doesNotContain("127.0.0.1");
        });
    }

    @Test
    void a_5xx_answer_is_a_failure_of_the_extension() {
        extension.script(Hook.STOP, FakeExtensionServer.reply(503, "maintenance"));

        assertThatThrownBy(() -> hooks.stop(ID, INSTANCE)).isInstanceOfSatisfying(HookException.class, e -> {
            assertThat(e.failure()).isEqualTo(HookException.Failure.FAILED);
            assertThat(e.rejected()).isFalse();
            assertThat(e.status()).hasValue(503);
            assertThat(e.getMessage()).isEqualTo("custom extension hook stop failed: HTTP 503: maintenance");
        });
    }

    @Test
    void an_answer_slower_than_the_timeout_is_a_timeout() {
        extension.script(Hook.START_FRESH, new FakeExtensionServer.Hang());

        assertThatThrownBy(() -> hooks.startFresh(start("{}"))).isInstanceOfSatisfying(HookException.class, e -> {
            assertThat(e.failure()).isEqualTo(HookException.Failure.TIMED_OUT);
            assertThat(e.status()).isEmpty();
            assertThat(e.getMessage()).isEqualTo("custom extension hook start-fresh did not answer within 500 ms");
        });
    }

    @Test
    void a_body_that_stalls_after_the_status_is_a_timeout_too() {
        extension.script(Hook.START_FRESH, new FakeExtensionServer.StallBody());

        assertThatThrownBy(() -> hooks.startFresh(start("{}")))
                .isInstanceOfSatisfying(
                        HookException.class, e -> assertThat(e.failure()).isEqualTo(HookException.Failure.TIMED_OUT));
    }

    @Test
    void a_success_answer_over_the_size_limit_is_unusable_and_an_oversized_error_is_cut() {
        String huge = "{\"pad\":\"" + "x".repeat(HttpLifecycleHooks.MAX_RESPONSE_BYTES) + "\"}";
        extension.script(Hook.PATCH_PARAMS, FakeExtensionServer.reply(200, huge), FakeExtensionServer.reply(400, huge));

        assertThatThrownBy(() -> hooks.patchParams(ID, "{}")).isInstanceOfSatisfying(HookException.class, e -> {
            assertThat(e.failure()).isEqualTo(HookException.Failure.BAD_RESPONSE);
            assertThat(e.getMessage()).contains("larger than 1048576 bytes");
        });
        assertThatThrownBy(() -> hooks.patchParams(ID, "{}")).isInstanceOfSatisfying(HookException.class, e -> {
            assertThat(e.failure()).isEqualTo(HookException.Failure.REJECTED);
            assertThat(e.body().orElseThrow()).startsWith("{\"pad\":\"xxx").hasSize(HookException.MAX_BODY_CHARS + 3);
        });
    }

    @Test
    void a_connection_closed_without_an_answer_is_unreachable() {
        extension.script(Hook.PATCH_PARAMS, new FakeExtensionServer.Drop());

        assertThatThrownBy(() -> hooks.patchParams(ID, "{\"a\":1}")).isInstanceOfSatisfying(HookException.class, e -> {
            assertThat(e.failure()).isEqualTo(HookException.Failure.UNREACHABLE);
            assertThat(e.getMessage()).contains("patch-params", "could not be reached");
        });
    }

    @Test
    void a_refused_connection_is_unreachable() throws Exception {
        URI closed;
        try (FakeExtensionServer gone = FakeExtensionServer.start()) {
            closed = gone.url();
        }
        HttpLifecycleHooks nowhere = new HttpLifecycleHooks(http, closed, Duration.ofSeconds(2));

        assertThatThrownBy(() -> nowhere.stop(ID, INSTANCE))
                .isInstanceOfSatisfying(
                        HookException.class, e -> assertThat(e.failure()).isEqualTo(HookException.Failure.UNREACHABLE));
    }

    @Test
    void a_long_error_body_is_cut_and_control_characters_are_replaced() {
        String body = "x".repeat(5000) + "\u0000";
        extension.script(Hook.START_FRESH, FakeExtensionServer.reply(400, "bad\r\nrequest " + body));

        assertThatThrownBy(() -> hooks.startFresh(start("{}"))).isInstanceOfSatisfying(HookException.class, e -> {
            assertThat(e.body().orElseThrow())
                    .startsWith("bad??request ")
                    .endsWith("...")
                    .hasSize(HookException.MAX_BODY_CHARS + 3);
            assertThat(e.getMessage()).hasSizeLessThan(700);
        });
    }

    @Test
    void start_fresh_needs_a_json_object_with_string_boot_args() {
        extension.script(
                Hook.START_FRESH,
                FakeExtensionServer.reply(200, "ok"),
                FakeExtensionServer.reply(200, "{\"extraBootArgs\":42}"));

        assertThatThrownBy(() -> hooks.startFresh(start("{}"))).isInstanceOfSatisfying(HookException.class, e -> {
            assertThat(e.failure()).isEqualTo(HookException.Failure.BAD_RESPONSE);
            assertThat(e.getMessage()).contains("not JSON");
        });
        assertThatThrownBy(() -> hooks.startFresh(start("{}")))
                .isInstanceOfSatisfying(
                        HookException.class,
                        e -> assertThat(e.getMessage()).contains("extraBootArgs must be a string"));
    }

    @Test
    void patch_params_sends_the_patch_verbatim_and_returns_the_full_new_params() throws Exception {
        extension.script(
                Hook.PATCH_PARAMS,
                FakeExtensionServer.reply(200, "{\"customExtensionParams\":{\"vpn\":\"eu\",\"fw\":[1,2]}}"),
                FakeExtensionServer.reply(200, "{}"),
                FakeExtensionServer.reply(200, "{\"customExtensionParams\":[1]}"));

        assertThat(hooks.patchParams(ID, "{\"vpn\":\"eu\",\"nested\":{\"x\":null}}"))
                .isEqualTo("{\"vpn\":\"eu\",\"fw\":[1,2]}");
        FakeExtensionServer.Call call = extension.calls(Hook.PATCH_PARAMS).getFirst();
        assertThat(call.text("sandboxId")).isEqualTo(ID.value());
        assertThat(call.body().get("patch").toString()).isEqualTo("{\"vpn\":\"eu\",\"nested\":{\"x\":null}}");

        assertThat(hooks.patchParams(ID, "{}")).isEqualTo("{}");
        assertThatThrownBy(() -> hooks.patchParams(ID, "{}"))
                .isInstanceOfSatisfying(
                        HookException.class,
                        e -> assertThat(e.getMessage()).contains("customExtensionParams must be a JSON object"));
    }

    @Test
    void stop_sends_the_sandbox_and_instance_ids() throws Exception {
        hooks.stop(ID, INSTANCE);

        FakeExtensionServer.Call call = extension.awaitCalls(Hook.STOP, 1, WAIT).getFirst();
        assertThat(call.text("sandboxId")).isEqualTo(ID.value());
        assertThat(call.text("sandboxInstanceId")).isEqualTo(INSTANCE.toString());
    }

    @Test
    void only_absolute_http_urls_are_accepted() {
        assertThatThrownBy(() -> new HttpLifecycleHooks(http, URI.create("file:///tmp/x"), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new HttpLifecycleHooks(http, URI.create("http://h/"), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
