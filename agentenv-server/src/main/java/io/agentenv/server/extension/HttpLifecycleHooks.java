package io.agentenv.server.extension;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentenv.orchestrator.Hook;
import io.agentenv.orchestrator.HookException;
import io.agentenv.orchestrator.HookStart;
import io.agentenv.orchestrator.LifecycleHooks;
import io.agentenv.spi.HostNetwork;
import io.agentenv.spi.SandboxId;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The custom extension over HTTP: every hook is {@code POST {url}/sandbox-hook/<name>} with a JSON body, one call per
 * hook with its own deadline ({@code AENV_CUSTOM_EXTENSION_TIMEOUT_MS}, covering connect, answer and body), no retries.
 * 2xx is success; 4xx is {@link HookException.Failure#REJECTED}; any other status FAILED; no answer in time TIMED_OUT;
 * a refused, reset or closed connection UNREACHABLE; a 2xx whose body start-fresh or patch-params cannot use
 * BAD_RESPONSE (also a 2xx body over {@value #MAX_RESPONSE_BYTES} bytes; error bodies are cut there). The URL (which may carry
 * credentials) is never logged nor put in messages. The contract is in docs/custom-extension.md.
 */
public final class HttpLifecycleHooks implements LifecycleHooks {
    /** Largest response body read from the extension. */
    public static final int MAX_RESPONSE_BYTES = 1 << 20;

    private static final Logger log = LoggerFactory.getLogger(HttpLifecycleHooks.class);

    private final HttpClient http;
    private final String baseUrl;
    private final Duration timeout;
    private static final Executor VIRTUAL_THREADS =
            task -> Thread.ofVirtual().name("aenv-hook-read").start(task);

    private final ObjectMapper json = new ObjectMapper();

    /**
     * @param http    the server's shared client (created once in Main)
     * @param baseUrl the extension's base URL (an http or https URL); hooks are under {@code /sandbox-hook/}
     * @param timeout the deadline of one hook call
     */
    public HttpLifecycleHooks(HttpClient http, URI baseUrl, Duration timeout) {
        this.http = requireNonNull(http, "http is null");
        requireNonNull(baseUrl, "baseUrl is null");
        String scheme = baseUrl.getScheme();
        if ((!"http".equals(scheme) && !"https".equals(scheme)) || baseUrl.getHost() == null) {
            throw new IllegalArgumentException("the custom extension URL must be an absolute http(s) URL");
        }
        String text = baseUrl.toString();
        this.baseUrl = text.endsWith("/") ? text.substring(0, text.length() - 1) : text;
        this.timeout = requireNonNull(timeout, "timeout is null");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
    }

    @Override
    public boolean enabled() {
        return true;
    }

    @Override
    public Optional<String> startFresh(HookStart start) throws HookException {
        Answer response = post(Hook.START_FRESH, start.sandboxId(), startBody(start));
        JsonNode answer = object(Hook.START_FRESH, response);
        JsonNode args = answer.get("extraBootArgs");
        if (args == null || args.isNull()) {
            return Optional.empty();
        }
        if (!args.isTextual()) {
            throw HookException.badResponse(
                    Hook.START_FRESH, response.status(), response.body(), "extraBootArgs must be a string or null");
        }
        return args.asText().isBlank() ? Optional.empty() : Optional.of(args.asText());
    }

    @Override
    public void startResume(HookStart start) throws HookException {
        post(Hook.START_RESUME, start.sandboxId(), startBody(start)); // the answer's body is ignored
    }

    @Override
    public String patchParams(SandboxId sandboxId, String patch) throws HookException {
        requireNonNull(sandboxId, "sandboxId is null");
        requireNonNull(patch, "patch is null");
        ObjectNode body = json.createObjectNode();
        body.put("sandboxId", sandboxId.value());
        body.set("patch", parseObject(patch));
        Answer response = post(Hook.PATCH_PARAMS, sandboxId, body);
        JsonNode answer = object(Hook.PATCH_PARAMS, response);
        JsonNode params = answer.get("customExtensionParams");
        if (params == null || params.isNull()) {
            return "{}";
        }
        if (!params.isObject()) {
            throw HookException.badResponse(
                    Hook.PATCH_PARAMS,
                    response.status(),
                    response.body(),
                    "customExtensionParams must be a JSON object");
        }
        return write(params);
    }

    @Override
    public void stop(SandboxId sandboxId, UUID instanceId) throws HookException {
        requireNonNull(sandboxId, "sandboxId is null");
        requireNonNull(instanceId, "instanceId is null");
        ObjectNode body = json.createObjectNode();
        body.put("sandboxId", sandboxId.value());
        body.put("sandboxInstanceId", instanceId.toString());
        post(Hook.STOP, sandboxId, body);
    }

    private ObjectNode startBody(HookStart start) {
        ObjectNode body = json.createObjectNode();
        body.put("sandboxId", start.sandboxId().value());
        body.put("sandboxInstanceId", start.instanceId().toString());
        Optional<HostNetwork> network = start.network();
        if (network.isPresent()) {
            body.put("networkNamespacePath", network.get().namespacePath().toString());
            body.put("hostInteractionIp", network.get().hostInteractionIp().getHostAddress());
        } else {
            body.putNull("networkNamespacePath");
            body.putNull("hostInteractionIp");
        }
        body.set("customExtensionParams", parseObject(start.customExtensionParams()));
        return body;
    }

    /** An answer: status and body as text, {@code complete} false when the body was cut at the size limit. */
    private record Answer(int status, String body, boolean complete) {}

    private Answer post(Hook hook, SandboxId sandboxId, ObjectNode body) throws HookException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl + "/sandbox-hook/" + hook.wireName()))
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(write(body), StandardCharsets.UTF_8))
                .build();
        long started = System.nanoTime();
        CompletableFuture<HttpResponse<InputStream>> call =
                http.sendAsync(request, HttpResponse.BodyHandlers.ofInputStream());
        CompletableFuture<Answer> read = call.thenApplyAsync(HttpLifecycleHooks::read, VIRTUAL_THREADS);
        Answer answer;
        try {
            answer = read.get(timeout.toNanos(), TimeUnit.NANOSECONDS); // one deadline for the answer and its body
        } catch (TimeoutException e) {
            abandon(call);
            throw logged(sandboxId, HookException.timedOut(hook, timeout.toMillis(), e));
        } catch (InterruptedException e) {
            abandon(call);
            Thread.currentThread().interrupt();
            throw logged(sandboxId, HookException.unreachable(hook, e));
        } catch (CancellationException e) {
            throw logged(sandboxId, HookException.unreachable(hook, e));
        } catch (ExecutionException e) {
            Throwable cause =
                    e.getCause() instanceof UncheckedIOException unchecked ? unchecked.getCause() : e.getCause();
            if (cause instanceof HttpTimeoutException) {
                throw logged(sandboxId, HookException.timedOut(hook, timeout.toMillis(), cause));
            }
            throw logged(sandboxId, HookException.unreachable(hook, cause));
        }
        int status = answer.status();
        log.atDebug()
                .addKeyValue("sandbox_id", sandboxId.value())
                .addKeyValue("hook", hook.wireName())
                .addKeyValue("status", status)
                .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                .log("custom extension hook answered");
        if (status < 200 || status > 299) {
            throw logged(sandboxId, HookException.status(hook, status, answer.body()));
        }
        if (!answer.complete()) {
            throw logged(
                    sandboxId,
                    HookException.badResponse(hook, status, "", "larger than " + MAX_RESPONSE_BYTES + " bytes"));
        }
        return answer;
    }

    /** Reads at most {@link #MAX_RESPONSE_BYTES} (on a virtual thread; closing the stream on timeout ends it). */
    private static Answer read(HttpResponse<InputStream> response) {
        try (InputStream in = response.body()) {
            byte[] bytes = in.readNBytes(MAX_RESPONSE_BYTES + 1);
            boolean complete = bytes.length <= MAX_RESPONSE_BYTES;
            int length = complete ? bytes.length : MAX_RESPONSE_BYTES;
            return new Answer(response.statusCode(), new String(bytes, 0, length, StandardCharsets.UTF_8), complete);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Gives up on a call: cancels it, or closes its body stream if the answer already arrived. */
    private static void abandon(CompletableFuture<HttpResponse<InputStream>> call) {
        call.cancel(true);
        call.thenAccept(response -> {
            try {
                response.body().close();
            } catch (IOException e) {
                log.atDebug().setCause(e).log("closing an abandoned hook answer failed");
            }
        });
    }

    private JsonNode object(Hook hook, Answer response) throws HookException {
        JsonNode answer;
        try {
            answer = json.readTree(response.body());
        } catch (JsonProcessingException e) {
            throw HookException.badResponse(hook, response.status(), response.body(), "not JSON");
        }
        if (answer == null || !answer.isObject()) {
            throw HookException.badResponse(hook, response.status(), response.body(), "not a JSON object");
        }
        return answer;
    }

    /** Raw JSON object text from the store or the API (already validated there) as a tree. */
    private JsonNode parseObject(String rawJsonObject) {
        try {
            JsonNode node = json.readTree(rawJsonObject.isBlank() ? "{}" : rawJsonObject);
            if (node == null || !node.isObject()) {
                throw new IllegalArgumentException("custom extension params are not a JSON object");
            }
            return node;
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("custom extension params are not valid JSON", e);
        }
    }

    private String write(JsonNode node) {
        try {
            return json.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a JSON tree always serialises", e);
        }
    }

    private static HookException logged(SandboxId sandboxId, HookException e) {
        log.atDebug()
                .addKeyValue("sandbox_id", sandboxId.value())
                .addKeyValue("hook", e.hook().wireName())
                .addKeyValue("failure", e.failure())
                .log("custom extension hook call failed");
        return e;
    }
}
