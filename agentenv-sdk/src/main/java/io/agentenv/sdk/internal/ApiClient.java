package io.agentenv.sdk.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentenv.sdk.AuthenticationException;
import io.agentenv.sdk.InvalidArgumentException;
import io.agentenv.sdk.NotFoundException;
import io.agentenv.sdk.RateLimitException;
import io.agentenv.sdk.SandboxConfig;
import io.agentenv.sdk.SandboxException;
import io.agentenv.sdk.ServiceBusyException;
import io.agentenv.sdk.TimeoutException;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The control plane's REST API as E2B's SDKs call it: {@code X-API-KEY}, JSON bodies, errors as
 * {@code {"code": <status>, "message": ...}}, 429 with an integer {@code Retry-After} retried. Internal; not part of
 * the API.
 */
public final class ApiClient {
    private static final String USER_AGENT = "agentenv-java-sdk/" + Version.SDK;
    private static final Duration RETRY_BUDGET = Duration.ofSeconds(60);

    private final SandboxConfig config;

    /** A client for {@code config}'s API URL and key. */
    public ApiClient(SandboxConfig config) {
        this.config = config;
    }

    /** One answer: the status, the {@code X-Next-Token} header (if any) and the parsed body (if JSON). */
    public record Response(int status, Optional<String> nextToken, Optional<JsonNode> body, String rawBody) {
        /** Whether the status is 2xx. */
        public boolean ok() {
            return status >= 200 && status < 300;
        }

        /** The body's {@code code} field (E2B's soft checks read it), else the HTTP status. */
        public int code() {
            return body.filter(b -> b.path("code").isInt())
                    .map(b -> b.get("code").asInt())
                    .orElse(status);
        }

        /** The body's {@code message}, else the raw body, else a generic text. */
        public String message() {
            return body.map(b -> Json.text(b, "message"))
                    .filter(m -> !m.isEmpty())
                    .orElse(rawBody.isBlank() ? "HTTP " + status : rawBody.strip());
        }

        /** The body; a 2xx without one is a protocol error. */
        public JsonNode json() {
            return body.orElseThrow(
                    () -> new SandboxException("the API answered " + status + " without a JSON body", status, null));
        }
    }

    /** {@code GET path?query}. */
    public Response get(String path, Map<String, String> query) {
        return send("GET", path + queryString(query), null);
    }

    /** {@code POST path} with a JSON body. */
    public Response post(String path, JsonNode body) {
        return send("POST", path, body);
    }

    /** {@code PUT path} with a JSON body. */
    public Response put(String path, JsonNode body) {
        return send("PUT", path, body);
    }

    /** {@code DELETE path}. */
    public Response delete(String path) {
        return send("DELETE", path, null);
    }

    /** Sends one request, retrying 429 answers that carry an integer {@code Retry-After}. */
    public Response send(String method, String pathAndQuery, JsonNode body) {
        String key = config.apiKey()
                .orElseThrow(() -> new AuthenticationException(
                        "API key is required: set E2B_API_KEY or SandboxConfig.builder().apiKey(...)"));
        URI uri = resolve(pathAndQuery);
        Instant deadline = Instant.now().plus(RETRY_BUDGET);
        for (int attempt = 0; ; attempt++) {
            HttpRequest.Builder builder = HttpRequest.newBuilder(uri)
                    .timeout(config.requestTimeout())
                    .header("X-API-KEY", key)
                    .header("User-Agent", USER_AGENT);
            config.headers().forEach(builder::header);
            if (body != null) {
                builder.header("Content-Type", "application/json")
                        .method(method, HttpRequest.BodyPublishers.ofByteArray(Json.bytes(body)));
            } else {
                builder.method(method, HttpRequest.BodyPublishers.noBody());
            }
            HttpResponse<byte[]> response;
            try {
                response = config.httpClient().send(builder.build(), HttpResponse.BodyHandlers.ofByteArray());
            } catch (HttpTimeoutException e) {
                throw new TimeoutException(
                        "the API did not answer " + method + " " + uri.getPath() + " within "
                                + config.requestTimeout().toMillis() + " ms (requestTimeout)",
                        0,
                        e);
            } catch (IOException e) {
                throw new SandboxException("cannot reach the API at " + config.apiUrl() + ": " + describe(e), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SandboxException("interrupted", e);
            }
            byte[] bytes = response.body() == null ? new byte[0] : response.body();
            Response r = new Response(
                    response.statusCode(),
                    response.headers().firstValue("X-Next-Token").filter(t -> !t.isEmpty()),
                    Json.parse(bytes),
                    new String(bytes, StandardCharsets.UTF_8));
            if (r.status() == 429 && attempt < config.retries()) {
                OptionalLong wait = retryAfterSeconds(response);
                if (wait.isPresent()
                        && Instant.now().plusSeconds(wait.getAsLong()).isBefore(deadline)) {
                    sleep(Duration.ofSeconds(wait.getAsLong()));
                    continue;
                }
            }
            return r;
        }
    }

    /**
     * The exception for a failed answer, like E2B's {@code handleApiError}: 401 authentication, 429 rate limit, 503
     * busy, 400 invalid argument, 404 not found, anything else the base type with "status: message".
     */
    public static SandboxException error(Response r) {
        int status = r.status();
        String message = r.message();
        switch (status) {
            case 400:
                return new InvalidArgumentException(status + ": " + message, status, null);
            case 401:
                return new AuthenticationException(
                        "Unauthorized, please check your credentials. - " + message, status, null);
            case 404:
                return new NotFoundException(status + ": " + message, status, null);
            case 429:
                return new RateLimitException("Rate limit exceeded, please try again later - " + message, status, null);
            case 503:
                return new ServiceBusyException(
                        "The service is busy, please try again later - " + message, status, null);
            default:
                return new SandboxException(status + ": " + message, status, null);
        }
    }

    /** The same mapping for an error object inside a 2xx body (a fork child's {@code error}). */
    public static SandboxException error(JsonNode errorObject) {
        int code = errorObject.path("code").asInt(500);
        return error(new Response(code, Optional.empty(), Optional.of(errorObject), ""));
    }

    /** Percent-encodes one path segment or query value. */
    public static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private URI resolve(String pathAndQuery) {
        String base = config.apiUrl().toString();
        if (base.endsWith("/")) {
            base = base.substring(0, base.length() - 1);
        }
        return URI.create(base + pathAndQuery);
    }

    private static String queryString(Map<String, String> query) {
        if (query == null || query.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, String> e : new LinkedHashMap<>(query).entrySet()) {
            sb.append(sb.length() == 0 ? '?' : '&')
                    .append(encode(e.getKey()))
                    .append('=')
                    .append(encode(e.getValue()));
        }
        return sb.toString();
    }

    private static OptionalLong retryAfterSeconds(HttpResponse<?> response) {
        Optional<String> value = response.headers().firstValue("Retry-After");
        if (value.isEmpty() || !value.get().strip().matches("[0-9]{1,6}")) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(Long.parseLong(value.get().strip()));
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxException("interrupted", e);
        }
    }

    /** A short description of an I/O failure. */
    public static String describe(Throwable e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
