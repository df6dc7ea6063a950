package io.agentenv.cli;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentenv.api.model.ClusterNode;
import io.agentenv.api.model.ConnectSandbox;
import io.agentenv.api.model.ListedSandbox;
import io.agentenv.api.model.NewSandboxV2;
import io.agentenv.api.model.NewVolume;
import io.agentenv.api.model.PauseSandbox;
import io.agentenv.api.model.Sandbox;
import io.agentenv.api.model.SandboxDetail;
import io.agentenv.api.model.SandboxForkRequest;
import io.agentenv.api.model.SandboxForkResult;
import io.agentenv.api.model.SandboxLogEntry;
import io.agentenv.api.model.SandboxLogsV2Response;
import io.agentenv.api.model.SandboxMetric;
import io.agentenv.api.model.SandboxNetworkUpdateConfig;
import io.agentenv.api.model.SandboxSnapshotRequest;
import io.agentenv.api.model.SandboxTimeoutUpdate;
import io.agentenv.api.model.SnapshotInfo;
import io.agentenv.api.model.TemplateBuildInfo;
import io.agentenv.api.model.TemplateBuildRequestV3;
import io.agentenv.api.model.TemplateBuildStartV2;
import io.agentenv.api.model.TemplateRequestResponseV3;
import io.agentenv.api.model.Volume;
import io.agentenv.api.model.VolumeAndToken;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The control-plane REST calls the CLI makes, with E2B's wire records. One instance per invocation. Requests go through
 * the JDK's {@link HttpURLConnection}: for one or a few requests per process it starts several times faster than
 * {@code java.net.http.HttpClient} (whose construction alone sets up TLS, even for an http:// URL), and every command
 * makes at least one.
 */
final class ApiClient {
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration UPLOAD_TIMEOUT = Duration.ofMinutes(10);
    private static final String NEXT_TOKEN = "x-next-token";

    /** Connect's result: the sandbox, and whether the call resumed it (201) or it was running (200). */
    record Connected(Sandbox sandbox, boolean resumed) {}

    /** An answer: status, body (empty when there was none) and headers (names as sent, compared ignoring case). */
    record Reply(int statusCode, String body, Map<String, List<String>> headers) {
        Optional<String> header(String name) {
            return headers.entrySet().stream()
                    .filter(e -> e.getKey() != null && e.getKey().equalsIgnoreCase(name))
                    .flatMap(e -> e.getValue().stream())
                    .findFirst();
        }
    }

    private final URI base;
    private final String apiKey;

    ApiClient(URI base, String apiKey) {
        this.base = requireNonNull(base, "base is null");
        this.apiKey = requireNonNull(apiKey, "apiKey is null");
    }

    /** The wire mapper, initialised when the first body is read or written (Jackson takes long to start). */
    private static ObjectMapper json() {
        return JsonMappers.WIRE;
    }

    Sandbox create(NewSandboxV2 body) {
        return create(body, List.of());
    }

    /** {@code POST /v2/sandboxes} with {@code volumeMounts} added to the body when there are any. */
    Sandbox create(NewSandboxV2 body, List<VolumeMountOption> volumeMounts) {
        Object wire = body;
        if (!volumeMounts.isEmpty()) {
            ObjectNode node = json().valueToTree(body);
            node.set("volumeMounts", json().valueToTree(volumeMounts));
            wire = node;
        }
        return read(expect(send("POST", "/v2/sandboxes", wire), 201), Sandbox.class);
    }

    SandboxDetail info(String id) {
        return read(expect(send("GET", "/sandboxes/" + segment(id), null), 200), SandboxDetail.class);
    }

    /** All pages of the v2 list, newest first. */
    List<ListedSandbox> list(Optional<String> states, Map<String, String> metadata) {
        StringBuilder query = new StringBuilder("limit=100");
        states.ifPresent(s -> query.append("&state=").append(URLEncoder.encode(s, StandardCharsets.UTF_8)));
        if (!metadata.isEmpty()) {
            query.append("&metadata=").append(metadataQuery(metadata));
        }
        List<ListedSandbox> all = new ArrayList<>();
        Optional<String> token = Optional.empty();
        do {
            String path = "/v2/sandboxes?" + query
                    + token.map(t -> "&nextToken=" + URLEncoder.encode(t, StandardCharsets.UTF_8))
                            .orElse("");
            Reply response = expect(send("GET", path, null), 200);
            all.addAll(read(response, new TypeReference<List<ListedSandbox>>() {}));
            token = response.header(NEXT_TOKEN).filter(t -> !t.isEmpty());
        } while (token.isPresent());
        return all;
    }

    /** Checks that the server accepts the key (one sandbox listed at most); throws when it does not. */
    void verify() {
        expect(send("GET", "/v2/sandboxes?limit=1", null), 200);
    }

    /** True when killed, false when there was no such sandbox. */
    boolean kill(String id) {
        Reply response = send("DELETE", "/sandboxes/" + segment(id), null);
        if (response.statusCode() == 404) {
            return false;
        }
        expect(response, 204);
        return true;
    }

    /** True when this call paused it, false when it was already paused. */
    boolean pause(String id, boolean keepMemory) {
        Reply response = send("POST", "/sandboxes/" + segment(id) + "/pause", new PauseSandbox(keepMemory));
        if (response.statusCode() == 409) {
            return false;
        }
        expect(response, 204);
        return true;
    }

    Connected connect(String id, Optional<Integer> timeoutSeconds) {
        Reply response = send(
                "POST", "/v2/sandboxes/" + segment(id) + "/connect", new ConnectSandbox(timeoutSeconds.orElse(null)));
        if (response.statusCode() != 200 && response.statusCode() != 201) {
            throw error(response);
        }
        return new Connected(read(response, Sandbox.class), response.statusCode() == 201);
    }

    void setTimeout(String id, int seconds) {
        expect(send("POST", "/sandboxes/" + segment(id) + "/timeout", new SandboxTimeoutUpdate(seconds)), 204);
    }

    List<SandboxForkResult> fork(String id, int count, Optional<Integer> timeoutSeconds) {
        Reply response = expect(
                send(
                        "POST",
                        "/sandboxes/" + segment(id) + "/fork",
                        new SandboxForkRequest(timeoutSeconds.orElse(null), count)),
                201);
        return read(response, new TypeReference<List<SandboxForkResult>>() {});
    }

    SnapshotInfo snapshot(String id, Optional<String> name) {
        return read(
                expect(
                        send(
                                "POST",
                                "/sandboxes/" + segment(id) + "/snapshots",
                                new SandboxSnapshotRequest(name.orElse(null))),
                        201),
                SnapshotInfo.class);
    }

    List<SnapshotInfo> snapshots(Optional<String> sandboxId) {
        List<SnapshotInfo> all = new ArrayList<>();
        Optional<String> token = Optional.empty();
        do {
            String path = "/snapshots?limit=100"
                    + sandboxId
                            .map(s -> "&sandboxID=" + URLEncoder.encode(s, StandardCharsets.UTF_8))
                            .orElse("")
                    + token.map(t -> "&nextToken=" + URLEncoder.encode(t, StandardCharsets.UTF_8))
                            .orElse("");
            Reply response = expect(send("GET", path, null), 200);
            all.addAll(read(response, new TypeReference<List<SnapshotInfo>>() {}));
            token = response.header(NEXT_TOKEN).filter(t -> !t.isEmpty());
        } while (token.isPresent());
        return all;
    }

    /**
     * The envd token of a running sandbox (none when the sandbox is not secured), from {@code GET /sandboxes/{id}}
     * (which returns {@code envdAccessToken} like create and connect do, without resuming a paused sandbox).
     */
    Optional<String> envdToken(String id) {
        SandboxDetail detail = info(id);
        if (detail.state() != io.agentenv.api.model.SandboxState.RUNNING) {
            throw new ApiException(
                    409,
                    "sandbox " + id + " is " + detail.state().wire() + " (resume it with: aenv connect " + id + ")");
        }
        return Optional.ofNullable(detail.envdAccessToken()).filter(t -> !t.isEmpty());
    }

    /** {@code GET /v2/sandboxes/{id}/logs}: one page from the oldest (or, backwards, the newest) entry. */
    List<SandboxLogEntry> logs(
            String id, int limit, Optional<String> level, Optional<String> search, boolean newestFirst) {
        String query = "?limit=" + limit + "&direction=" + (newestFirst ? "backward" : "forward")
                + level.map(l -> "&level=" + enc(l)).orElse("")
                + search.map(s -> "&search=" + enc(s)).orElse("");
        return read(
                        expect(send("GET", "/v2/sandboxes/" + segment(id) + "/logs" + query, null), 200),
                        SandboxLogsV2Response.class)
                .logs();
    }

    /** {@code GET /sandboxes/{id}/metrics}: the sampled history, oldest first. */
    List<SandboxMetric> metrics(String id) {
        return read(
                expect(send("GET", "/sandboxes/" + segment(id) + "/metrics", null), 200),
                new TypeReference<List<SandboxMetric>>() {});
    }

    /** {@code GET /templates} (E2B's shape, read loosely: the CLI prints a few fields). */
    JsonNode templates() {
        Reply response = send("GET", "/templates", null);
        if (response.statusCode() == 404) {
            throw new ApiException(404, "this server does not list templates (GET /templates answered 404)");
        }
        return read(expect(response, 200), JsonNode.class);
    }

    /** {@code POST /v3/templates}: a template by name (created when new) and a new build of it. */
    TemplateRequestResponseV3 requestBuild(TemplateBuildRequestV3 body) {
        return read(expect(send("POST", "/v3/templates", body), 202), TemplateRequestResponseV3.class);
    }

    /** Where a COPY step's files go: whether the server has them already, else the URL and headers to PUT them with. */
    record Upload(boolean present, Optional<String> url, Map<String, String> headers) {}

    /** {@code GET /templates/{templateID}/files/{hash}}. */
    Upload fileUpload(String templateId, String hash) {
        JsonNode node = read(
                expect(send("GET", "/templates/" + segment(templateId) + "/files/" + segment(hash), null), 201),
                JsonNode.class);
        Map<String, String> headers = new java.util.LinkedHashMap<>();
        node.path("headers")
                .properties()
                .forEach(e -> headers.put(e.getKey(), e.getValue().asText()));
        JsonNode url = node.get("url");
        return new Upload(
                node.path("present").asBoolean(false),
                url == null || url.isNull() || url.asText().isEmpty() ? Optional.empty() : Optional.of(url.asText()),
                headers);
    }

    /**
     * PUTs a file to an upload URL with the headers the server gave (and no API key: the URL carries what it needs); a
     * relative URL is on this server.
     */
    void upload(String url, Map<String, String> headers, java.nio.file.Path file) {
        URI target = base.resolve(url);
        try {
            long size = java.nio.file.Files.size(file);
            HttpURLConnection connection = (HttpURLConnection) target.toURL().openConnection();
            connection.setRequestMethod("PUT");
            connection.setConnectTimeout((int) CONNECT_TIMEOUT.toMillis());
            connection.setReadTimeout((int) UPLOAD_TIMEOUT.toMillis());
            connection.setInstanceFollowRedirects(false);
            headers.forEach((name, value) -> {
                if (!name.equalsIgnoreCase("content-length")) {
                    connection.setRequestProperty(name, value);
                }
            });
            connection.setDoOutput(true);
            connection.setFixedLengthStreamingMode(size);
            try (OutputStream out = connection.getOutputStream()) {
                java.nio.file.Files.copy(file, out);
            }
            int status = connection.getResponseCode();
            InputStream in = status >= 400 ? connection.getErrorStream() : connection.getInputStream();
            String text = "";
            if (in != null) {
                try (in) {
                    text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
            }
            if (status / 100 != 2) {
                throw error(new Reply(status, text, connection.getHeaderFields()));
            }
        } catch (IOException e) {
            throw new ApiException(
                    0,
                    "cannot upload to " + target + ": "
                            + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
        }
    }

    /** {@code POST /v2/templates/{templateID}/builds/{buildID}}: the build's base and steps; it runs on the server. */
    void startBuild(String templateId, String buildId, TemplateBuildStartV2 body) {
        expect(send("POST", "/v2/templates/" + segment(templateId) + "/builds/" + segment(buildId), body), 204);
    }

    /** {@code GET /templates/{templateID}/builds/{buildID}/status}: the status and the log from {@code logsOffset}. */
    TemplateBuildInfo buildStatus(String templateId, String buildId, int logsOffset) {
        return read(
                expect(
                        send(
                                "GET",
                                "/templates/" + segment(templateId) + "/builds/" + segment(buildId)
                                        + "/status?logsOffset=" + logsOffset,
                                null),
                        200),
                TemplateBuildInfo.class);
    }

    /** {@code GET /templates/{templateID}/tags}. */
    JsonNode templateTags(String templateId) {
        return read(expect(send("GET", "/templates/" + segment(templateId) + "/tags", null), 200), JsonNode.class);
    }

    /** True when deleted, false when there was no such template. */
    boolean deleteTemplate(String idOrAlias) {
        Reply response = send("DELETE", "/templates/" + segment(idOrAlias), null);
        if (response.statusCode() == 404) {
            return false;
        }
        expect(response, 204);
        return true;
    }

    /** A cluster's nodes, as a gateway lists them (a lone server has no such route: 404). */
    List<ClusterNode> nodes() {
        return read(expect(send("GET", "/nodes", null), 200), new TypeReference<List<ClusterNode>>() {});
    }

    ClusterNode node(String id) {
        return read(expect(send("GET", "/nodes/" + segment(id), null), 200), ClusterNode.class);
    }

    /** Drains a node ({@code draining}) or lets it take sandboxes again ({@code ready}). */
    void setNodeStatus(String id, String status) {
        expect(send("POST", "/nodes/" + segment(id), new ClusterNode.StatusChange(status)), 204);
    }

    /** {@code POST /volumes}: the new volume with its token. */
    VolumeAndToken createVolume(NewVolume body) {
        return read(expect(send("POST", "/volumes", body), 201), VolumeAndToken.class);
    }

    /** {@code GET /volumes}: every volume, newest first. */
    List<Volume> volumes() {
        return read(expect(send("GET", "/volumes", null), 200), new TypeReference<List<Volume>>() {});
    }

    /** {@code GET /volumes/{volumeID}}: the volume with its token; empty when there is no such volume. */
    Optional<VolumeAndToken> volume(String id) {
        Reply response = send("GET", "/volumes/" + segment(id), null);
        if (response.statusCode() == 404) {
            return Optional.empty();
        }
        return Optional.of(read(expect(response, 200), VolumeAndToken.class));
    }

    /** True when deleted, false when there was no such volume (409 while sandboxes mount it is thrown). */
    boolean deleteVolume(String id) {
        Reply response = send("DELETE", "/volumes/" + segment(id), null);
        if (response.statusCode() == 404) {
            return false;
        }
        expect(response, 204);
        return true;
    }

    /** The content routes of a volume, on this server, with the volume's token. */
    VolumeContentClient volumeContent(VolumeAndToken volume) {
        return new VolumeContentClient(base, volume.volumeID(), volume.token());
    }

    /** {@code PUT /sandboxes/{id}/network}: replaces the sandbox's egress rules. */
    void updateNetwork(String id, SandboxNetworkUpdateConfig body) {
        expect(send("PUT", "/sandboxes/" + segment(id) + "/network", body), 204);
    }

    /**
     * The list filter encoded like the E2B SDK does it: each key and value encoded, joined as {@code k=v&...}, and the
     * whole string encoded twice more (the server undoes all three layers).
     */
    static String metadataQuery(Map<String, String> metadata) {
        String inner = metadata.entrySet().stream()
                .map(e -> enc(e.getKey()) + "=" + enc(e.getValue()))
                .collect(Collectors.joining("&"));
        return enc(enc(inner));
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    static String segment(String id) {
        return URLEncoder.encode(id, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private Reply send(String method, String path, Object body) {
        byte[] content;
        try {
            content = body == null ? null : json().writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode the request", e);
        }
        try {
            HttpURLConnection connection =
                    (HttpURLConnection) base.resolve(path).toURL().openConnection();
            connection.setRequestMethod(method);
            connection.setConnectTimeout((int) CONNECT_TIMEOUT.toMillis());
            connection.setReadTimeout((int) REQUEST_TIMEOUT.toMillis());
            connection.setInstanceFollowRedirects(false);
            connection.setUseCaches(false);
            connection.setRequestProperty("X-API-Key", apiKey);
            connection.setRequestProperty("Accept", "application/json");
            if (content != null) {
                connection.setRequestProperty("Content-Type", "application/json");
                connection.setDoOutput(true);
                connection.setFixedLengthStreamingMode(content.length);
                try (OutputStream out = connection.getOutputStream()) {
                    out.write(content);
                }
            }
            int status = connection.getResponseCode();
            InputStream in = status >= 400 ? connection.getErrorStream() : connection.getInputStream();
            String text = "";
            if (in != null) {
                try (in) {
                    text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
            }
            // not disconnected: a read-out connection is kept alive for the next request (the list's next page)
            return new Reply(status, text, connection.getHeaderFields());
        } catch (IOException e) {
            throw new ApiException(
                    0,
                    "cannot reach " + base + ": "
                            + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
        }
    }

    private Reply expect(Reply response, int status) {
        if (response.statusCode() != status) {
            throw error(response);
        }
        return response;
    }

    private ApiException error(Reply response) {
        String message = message(response.statusCode(), response.body());
        if (response.statusCode() == 401) {
            message = message + " (check AENV_API_KEY or --api-key)";
        }
        return new ApiException(response.statusCode(), message);
    }

    /** An error answer's text: the {@code message} of its {@code {code, message}} body, else the body, else the status. */
    static String message(int status, String body) {
        String message = body;
        try {
            JsonNode node = json().readTree(body);
            if (node != null && node.hasNonNull("message")) {
                message = node.get("message").asText();
            }
        } catch (JsonProcessingException ignored) {
            // not JSON: show the raw body
        }
        return message == null || message.isBlank() ? "HTTP " + status : message;
    }

    private <T> T read(Reply response, Class<T> type) {
        try {
            return json().readValue(response.body(), type);
        } catch (JsonProcessingException e) {
            throw new ApiException(response.statusCode(), "unexpected response: " + e.getOriginalMessage());
        }
    }

    private <T> T read(Reply response, TypeReference<T> type) {
        try {
            return json().readValue(response.body(), type);
        } catch (JsonProcessingException e) {
            throw new ApiException(response.statusCode(), "unexpected response: " + e.getOriginalMessage());
        }
    }
}
