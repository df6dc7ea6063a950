package io.agentenv.envd.http;

import static java.util.Objects.requireNonNull;

import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/** The plain-HTTP routes (exact paths). Register everything before the server starts. */
public final class HttpRoutes {
    /** One registered route. */
    public record Route(String method, String path, Access access, HttpEndpoint endpoint) {
        public Route {
            requireNonNull(method, "method is null");
            requireNonNull(path, "path is null");
            requireNonNull(access, "access is null");
            requireNonNull(endpoint, "endpoint is null");
            if (!path.startsWith("/")) {
                throw new IllegalArgumentException("path must start with '/': " + path);
            }
        }
    }

    private final Map<String, Map<String, Route>> byPath = new ConcurrentHashMap<>();

    /** Adds {@code method path}; a second registration of the same pair is a programming error. */
    public HttpRoutes add(String method, String path, Access access, HttpEndpoint endpoint) {
        Route route = new Route(method.toUpperCase(Locale.ROOT), path, access, endpoint);
        Route previous =
                byPath.computeIfAbsent(path, p -> new ConcurrentHashMap<>()).putIfAbsent(route.method(), route);
        if (previous != null) {
            throw new IllegalStateException("route registered twice: " + route.method() + " " + path);
        }
        return this;
    }

    Optional<Map<String, Route>> forPath(String path) {
        return Optional.ofNullable(byPath.get(path));
    }
}
