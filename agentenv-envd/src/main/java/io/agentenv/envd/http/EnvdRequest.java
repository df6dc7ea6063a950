package io.agentenv.envd.http;

import static java.util.Objects.requireNonNull;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;

/**
 * The request side of one exchange, as envd's endpoints see it: method, decoded path, query parameters (decoded like
 * Go's {@code url.ParseQuery}), case-insensitive headers and the body (chunked or fixed length, already de-chunked).
 */
public final class EnvdRequest {
    private final HttpExchange exchange;
    private Map<String, List<String>> query;
    private InputStream body;
    private boolean bodyAdmitted;

    EnvdRequest(HttpExchange exchange) {
        this.exchange = requireNonNull(exchange, "exchange is null");
    }

    public String method() {
        return exchange.getRequestMethod();
    }

    /** The decoded path, without the query. */
    public String path() {
        String path = exchange.getRequestURI().getPath();
        return path == null ? "" : path;
    }

    /** The first value of query parameter {@code name}; a malformed query is a 400. */
    public Optional<String> query(String name) {
        List<String> values = queryParameters().get(name);
        return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.getFirst());
    }

    private Map<String, List<String>> queryParameters() {
        if (query == null) {
            query = parseQuery(exchange.getRequestURI().getRawQuery());
        }
        return query;
    }

    static Map<String, List<String>> parseQuery(String raw) {
        Map<String, List<String>> parameters = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) {
            return parameters;
        }
        for (String pair : raw.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int equals = pair.indexOf('=');
            String name = equals < 0 ? pair : pair.substring(0, equals);
            String value = equals < 0 ? "" : pair.substring(equals + 1);
            try {
                parameters
                        .computeIfAbsent(URLDecoder.decode(name, StandardCharsets.UTF_8), n -> new ArrayList<>())
                        .add(URLDecoder.decode(value, StandardCharsets.UTF_8));
            } catch (IllegalArgumentException e) {
                throw HttpException.badRequest("malformed query string: " + e.getMessage());
            }
        }
        return parameters;
    }

    /** The first value of header {@code name} (case-insensitive), or null. */
    public String header(String name) {
        return exchange.getRequestHeaders().getFirst(name);
    }

    /** Every value of header {@code name} (case-insensitive), in order. */
    public List<String> headers(String name) {
        List<String> values = exchange.getRequestHeaders().get(name);
        return values == null ? List.of() : List.copyOf(values);
    }

    public boolean hasHeader(String name) {
        return exchange.getRequestHeaders().containsKey(name);
    }

    /** Every header line as (name, value), names in the server's normalised case. */
    public void forEachHeader(BiConsumer<String, String> action) {
        Headers headers = exchange.getRequestHeaders();
        headers.forEach((name, values) -> values.forEach(value -> action.accept(name, value)));
    }

    /**
     * The body; reading it past its end returns -1. Closing it does nothing: the exchange reads what an endpoint left
     * unread after the response (see {@link EnvdHandler}) and then ends it.
     */
    public InputStream body() {
        if (body == null) {
            body = new FilterInputStream(exchange.getRequestBody()) {
                @Override
                public void close() {
                    // the exchange owns the stream
                }
            };
        }
        return body;
    }

    /**
     * Says that the endpoint took this request's body in (its sender may send that much: an authorized upload). A
     * response that then leaves part of it unread (the disk filled up half-way, say) reads more of the rest after it
     * before the connection closes ({@link EnvdResponse}), so that a client still sending finishes and reads the
     * answer instead of losing it to the reset a close with unread input makes.
     */
    public void admitBody() {
        bodyAdmitted = true;
    }

    boolean bodyAdmitted() {
        return bodyAdmitted;
    }

    /**
     * Reads and discards what the endpoint left of the body, at most {@code limit} bytes. True if the body ended within
     * them; false if more is left (the connection cannot be reused then).
     */
    boolean drain(long limit) throws IOException {
        InputStream in = exchange.getRequestBody();
        byte[] buffer = new byte[8192];
        long left = limit;
        int read;
        while ((read = in.read(buffer, 0, (int) Math.min(buffer.length, left + 1))) >= 0) {
            left -= read;
            if (left < 0) {
                return false;
            }
        }
        return true;
    }
}
