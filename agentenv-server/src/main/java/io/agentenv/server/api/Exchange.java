package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One request as an endpoint sees it: path parameters, query parameters (decoded once, as sent), the body (already
 * read, bounded by the size limit; empty on a streamed route), the request id used in logs, the origin the client
 * addressed ({@code scheme://host[:port]}, from the request line or its Host header), and on a streamed route the body
 * as a stream with its declared length (-1 when it has none), and the request headers an endpoint may read (lower-case
 * names, first value).
 */
record Exchange(
        String method,
        String path,
        Map<String, String> params,
        Map<String, List<String>> query,
        byte[] body,
        String requestId,
        String origin,
        long length,
        InputStream stream,
        Map<String, String> headers) {
    Exchange {
        requireNonNull(method, "method is null");
        requireNonNull(path, "path is null");
        params = Map.copyOf(params);
        query = Map.copyOf(query);
        requireNonNull(body, "body is null");
        requireNonNull(requestId, "requestId is null");
        requireNonNull(origin, "origin is null");
        requireNonNull(stream, "stream is null");
        headers = Map.copyOf(headers);
    }

    /** A request without headers for endpoints. */
    Exchange(
            String method,
            String path,
            Map<String, String> params,
            Map<String, List<String>> query,
            byte[] body,
            String requestId,
            String origin,
            long length,
            InputStream stream) {
        this(method, path, params, query, body, requestId, origin, length, stream, Map.of());
    }

    /** A request whose body was read whole. */
    Exchange(
            String method,
            String path,
            Map<String, String> params,
            Map<String, List<String>> query,
            byte[] body,
            String requestId,
            String origin) {
        this(method, path, params, query, body, requestId, origin, body.length, InputStream.nullInputStream());
    }

    /** The first value of header {@code name} (any case). */
    Optional<String> header(String name) {
        return Optional.ofNullable(headers.get(name.toLowerCase(java.util.Locale.ROOT)));
    }

    String param(String name) {
        String value = params.get(name);
        if (value == null) {
            throw new IllegalStateException("route has no parameter " + name);
        }
        return value;
    }

    /** The single value of a query parameter; repeating it is a 400. */
    Optional<String> queryValue(String name) {
        List<String> values = query.getOrDefault(name, List.of());
        if (values.size() > 1) {
            throw io.agentenv.orchestrator.AgentEnvException.invalidArgument(
                    "query parameter '" + name + "' must appear at most once");
        }
        return values.isEmpty() ? Optional.empty() : Optional.of(values.getFirst());
    }

    List<String> queryValues(String name) {
        return query.getOrDefault(name, List.of());
    }
}
