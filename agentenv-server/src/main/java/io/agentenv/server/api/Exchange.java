package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One request as an endpoint sees it: path parameters, query parameters (decoded once, as sent), the body (already
 * read, bounded by the size limit) and the request id used in logs.
 */
record Exchange(
        String method,
        String path,
        Map<String, String> params,
        Map<String, List<String>> query,
        byte[] body,
        String requestId) {
    Exchange {
        requireNonNull(method, "method is null");
        requireNonNull(path, "path is null");
        params = Map.copyOf(params);
        query = Map.copyOf(query);
        requireNonNull(body, "body is null");
        requireNonNull(requestId, "requestId is null");
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
