package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The route table: {@code METHOD /literal/{param}/...} patterns matched segment by segment. A path that matches a
 * pattern under another method is a 405 (with {@code Allow}); a path that matches nothing is a 404.
 */
final class Router {
    /** Handles one matched request. */
    @FunctionalInterface
    interface Endpoint {
        Reply handle(Exchange exchange) throws Exception;
    }

    /**
     * A route: its pattern (used as the metrics label), whether it needs the API key, whether its endpoint reads the
     * body itself as a stream ({@link Exchange#stream()}: no size limit but its own) and its endpoint.
     */
    record Route(
            String method,
            String pattern,
            List<String> segments,
            boolean authenticated,
            boolean streamed,
            Endpoint endpoint) {
        Route {
            requireNonNull(method, "method is null");
            requireNonNull(pattern, "pattern is null");
            segments = List.copyOf(segments);
            requireNonNull(endpoint, "endpoint is null");
        }
    }

    /** The outcome of a lookup. */
    sealed interface Match {
        record Found(Route route, Map<String, String> params) implements Match {}

        record WrongMethod(Set<String> allowed) implements Match {}

        record NotFound() implements Match {}
    }

    private final List<Route> routes = new ArrayList<>();

    Router add(String method, String pattern, Endpoint endpoint) {
        return add(method, pattern, true, endpoint);
    }

    Router addPublic(String method, String pattern, Endpoint endpoint) {
        return add(method, pattern, false, endpoint);
    }

    /** A route without the API key whose endpoint reads the body as a stream (it checks its caller itself). */
    Router addPublicStream(String method, String pattern, Endpoint endpoint) {
        routes.add(new Route(method, pattern, split(pattern), false, true, endpoint));
        return this;
    }

    private Router add(String method, String pattern, boolean authenticated, Endpoint endpoint) {
        routes.add(new Route(method, pattern, split(pattern), authenticated, false, endpoint));
        return this;
    }

    Match match(String method, String path) {
        List<String> parts = split(path);
        Set<String> allowed = new TreeSet<>();
        for (Route route : routes) {
            Optional<Map<String, String>> params = bind(route.segments(), parts);
            if (params.isEmpty()) {
                continue;
            }
            if (route.method().equals(method)) {
                return new Match.Found(route, params.get());
            }
            allowed.add(route.method());
        }
        return allowed.isEmpty() ? new Match.NotFound() : new Match.WrongMethod(allowed);
    }

    private static Optional<Map<String, String>> bind(List<String> pattern, List<String> parts) {
        if (pattern.size() != parts.size()) {
            return Optional.empty();
        }
        Map<String, String> params = new HashMap<>();
        for (int i = 0; i < pattern.size(); i++) {
            String p = pattern.get(i);
            String s = parts.get(i);
            if (p.startsWith("{") && p.endsWith("}")) {
                if (s.isEmpty()) {
                    return Optional.empty();
                }
                params.put(p.substring(1, p.length() - 1), s);
            } else if (!p.equals(s)) {
                return Optional.empty();
            }
        }
        return Optional.of(params);
    }

    private static List<String> split(String path) {
        String trimmed = path.startsWith("/") ? path.substring(1) : path;
        if (trimmed.endsWith("/")) {
            trimmed = trimmed.substring(0, trimmed.length() - 1);
        }
        return trimmed.isEmpty() ? List.of() : List.of(trimmed.split("/", -1));
    }
}
