package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import io.agentenv.api.model.ApiError;
import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.server.credentials.ApiKey;
import io.agentenv.volumes.VolumeException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The REST API's one Jetty handler: routing, authentication, body reading (chunked or not, bounded), dispatch to the
 * endpoints on the request's virtual thread, and the error envelope {@code {"code","message"}} on every error path.
 * Anything that is not a typed error becomes a 500 with a generic message and a reference id that is logged with
 * the cause.
 */
final class ApiHandler extends Handler.Abstract {
    private static final Logger log = LoggerFactory.getLogger(ApiHandler.class);
    static final String API_KEY_HEADER = "X-API-Key";
    private static final String JSON = "application/json";
    /** The request headers an endpoint can read through {@link Exchange#header}. */
    private static final List<String> ENDPOINT_HEADERS = List.of("authorization", "range");

    private final Router router;
    private final ApiKey apiKey;
    private final Json json;
    private final PrometheusMetrics metrics;
    private final int maxRequestBytes;

    ApiHandler(Router router, ApiKey apiKey, Json json, PrometheusMetrics metrics, int maxRequestBytes) {
        super(InvocationType.BLOCKING);
        this.router = requireNonNull(router, "router is null");
        this.apiKey = requireNonNull(apiKey, "apiKey is null");
        this.json = requireNonNull(json, "json is null");
        this.metrics = requireNonNull(metrics, "metrics is null");
        this.maxRequestBytes = maxRequestBytes;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        String method = request.getMethod();
        String path = request.getHttpURI().getPath();
        String requestId =
                HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        long started = System.nanoTime();
        String routeLabel = "unmatched";
        String sandboxId = null;
        Reply reply;
        try {
            Router.Match match = router.match(method, path == null ? "/" : path);
            boolean authenticated = !(match instanceof Router.Match.Found found)
                    || found.route().authenticated();
            if (authenticated) {
                authenticate(request);
            }
            reply = switch (match) {
                case Router.Match.NotFound ignored ->
                    throw new HttpProblem(404, "route not found: " + method + " " + clip(path));
                case Router.Match.WrongMethod wrong -> {
                    response.getHeaders().put(HttpHeader.ALLOW, String.join(", ", wrong.allowed()));
                    throw new HttpProblem(405, "method " + method + " not allowed for " + clip(path));
                }
                case Router.Match.Found found -> {
                    routeLabel = found.route().pattern();
                    sandboxId = found.params().get("id");
                    Exchange exchange = found.route().streamed()
                            ? new Exchange(
                                    method,
                                    path,
                                    found.params(),
                                    query(request),
                                    new byte[0],
                                    requestId,
                                    origin(request),
                                    request.getLength(),
                                    Request.asInputStream(request),
                                    headers(request))
                            : whole(request, method, path, found.params(), requestId);
                    yield found.route().endpoint().handle(exchange);
                }
            };
        } catch (AgentEnvException e) {
            reply = error(ErrorStatus.of(e.kind()), e.getMessage());
            if (reply.status() >= 500) {
                log.atWarn()
                        .addKeyValue("sandbox_id", sandboxId)
                        .addKeyValue("request_id", requestId)
                        .addKeyValue("kind", e.kind())
                        .setCause(e.getCause())
                        .log("request failed: {}", e.getMessage());
            }
        } catch (VolumeException e) {
            reply = error(ErrorStatus.of(e.kind()), e.getMessage());
            if (reply.status() >= 500) {
                log.atWarn()
                        .addKeyValue("request_id", requestId)
                        .addKeyValue("kind", e.kind())
                        .setCause(e.getCause())
                        .log("volume request failed: {}", e.getMessage());
            }
        } catch (HttpProblem e) {
            reply = error(e.status(), e.getMessage());
        } catch (Exception e) {
            log.atError()
                    .addKeyValue("sandbox_id", sandboxId)
                    .addKeyValue("request_id", requestId)
                    .addKeyValue("route", routeLabel)
                    .setCause(e)
                    .log("unexpected error");
            reply = error(500, "internal error (reference " + requestId + ")");
        }
        metrics.recordRequest(method, routeLabel, reply.status(), System.nanoTime() - started);
        log.atDebug()
                .addKeyValue("sandbox_id", sandboxId)
                .addKeyValue("request_id", requestId)
                .addKeyValue("method", method)
                .addKeyValue("route", routeLabel)
                .addKeyValue("status", reply.status())
                .addKeyValue("took_ms", (System.nanoTime() - started) / 1_000_000)
                .log("request");
        write(response, callback, reply);
        return true;
    }

    private void authenticate(Request request) {
        List<String> presented = request.getHeaders().getValuesList(API_KEY_HEADER);
        if (presented.isEmpty()) {
            throw new HttpProblem(401, "missing " + API_KEY_HEADER + " header");
        }
        if (presented.size() != 1) {
            throw new HttpProblem(401, API_KEY_HEADER + " header must appear exactly once");
        }
        if (!apiKey.matches(presented.getFirst())) {
            throw new HttpProblem(401, "invalid API key");
        }
    }

    /**
     * Reads the whole body, at most {@code maxRequestBytes}. An oversized body is drained up to a bounded amount
     * before the 413, so the client reads the answer instead of a reset connection; beyond that the connection is
     * closed by Jetty.
     */
    private byte[] body(Request request) throws IOException {
        long declared = request.getLength();
        long drainCap = 4L * maxRequestBytes;
        try (InputStream in = Request.asInputStream(request)) {
            if (declared > maxRequestBytes) {
                if (declared <= drainCap) {
                    drain(in, drainCap);
                }
                throw new HttpProblem(413, "request body exceeds " + maxRequestBytes + " bytes");
            }
            byte[] body = in.readNBytes(maxRequestBytes + 1);
            if (body.length > maxRequestBytes) {
                drain(in, drainCap);
                throw new HttpProblem(413, "request body exceeds " + maxRequestBytes + " bytes");
            }
            return body;
        }
    }

    private static void drain(InputStream in, long cap) throws IOException {
        byte[] buffer = new byte[8192];
        long total = 0;
        int n;
        while (total < cap && (n = in.read(buffer, 0, (int) Math.min(buffer.length, cap - total))) > 0) {
            total += n;
        }
    }

    /** {@code scheme://host[:port]} as the client addressed this server (Jetty takes host and port from Host). */
    private static String origin(Request request) {
        HttpURI uri = request.getHttpURI();
        String scheme = uri.getScheme() == null ? "http" : uri.getScheme();
        String host = Request.getServerName(request);
        if (host.indexOf(':') >= 0 && !host.startsWith("[")) {
            host = "[" + host + "]";
        }
        int port = Request.getServerPort(request);
        boolean usual = port <= 0 || (scheme.equals("http") && port == 80) || (scheme.equals("https") && port == 443);
        return scheme + "://" + host + (usual ? "" : ":" + port);
    }

    private static Map<String, List<String>> query(Request request) {
        Fields fields;
        try {
            fields = Request.extractQueryParameters(request, StandardCharsets.UTF_8);
        } catch (RuntimeException e) {
            throw new HttpProblem(400, "malformed query string");
        }
        Map<String, List<String>> query = new LinkedHashMap<>();
        for (Fields.Field field : fields) {
            query.put(field.getName(), List.copyOf(field.getValues()));
        }
        return query;
    }

    /** An exchange whose body is read whole (bounded by {@code maxRequestBytes}). */
    private Exchange whole(Request request, String method, String path, Map<String, String> params, String requestId)
            throws IOException {
        byte[] body = body(request);
        return new Exchange(
                method,
                path,
                params,
                query(request),
                body,
                requestId,
                origin(request),
                body.length,
                InputStream.nullInputStream(),
                headers(request));
    }

    /** The headers endpoints read: lower-case names, first value. */
    private static Map<String, String> headers(Request request) {
        Map<String, String> headers = new LinkedHashMap<>();
        for (String name : ENDPOINT_HEADERS) {
            String value = request.getHeaders().get(name);
            if (value != null) {
                headers.put(name, value);
            }
        }
        return headers;
    }

    private static Reply error(int status, String message) {
        return new Reply.Json(status, new ApiError(status, message));
    }

    private void write(Response response, Callback callback, Reply reply) {
        response.setStatus(reply.status());
        switch (reply) {
            case Reply.NoContent ignored -> callback.succeeded();
            case Reply.Json j -> {
                j.headers().forEach((name, value) -> response.getHeaders().put(name, value));
                send(response, callback, JSON, json.writeBytes(j.body()));
            }
            case Reply.RawJson raw -> send(response, callback, JSON, raw.body().getBytes(StandardCharsets.UTF_8));
            case Reply.Text text ->
                send(response, callback, text.contentType(), text.body().getBytes(StandardCharsets.UTF_8));
            case Reply.Stream stream -> {
                stream.headers().forEach((name, value) -> response.getHeaders().put(name, value));
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, stream.contentType());
                response.getHeaders().put(HttpHeader.CONTENT_LENGTH, stream.length());
                try (OutputStream out = Content.Sink.asOutputStream(response)) {
                    stream.body().writeTo(out);
                } catch (IOException | RuntimeException e) {
                    log.atDebug().setCause(e).log("streaming a response body failed");
                    callback.failed(e);
                    return;
                }
                callback.succeeded();
            }
        }
    }

    private static void send(Response response, Callback callback, String contentType, byte[] body) {
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
    }

    private static String clip(String s) {
        if (s == null) {
            return "";
        }
        return s.length() <= 200 ? s : s.substring(0, 200) + "...";
    }
}
