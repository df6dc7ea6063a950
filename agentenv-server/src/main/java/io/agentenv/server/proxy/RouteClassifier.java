package io.agentenv.server.proxy;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.SandboxId;
import java.util.List;
import java.util.Locale;
import org.eclipse.jetty.http.HttpFields;

/**
 * Decides which requests belong to the proxy, in this order:
 * <ol>
 *   <li>Host {@code <port>-<sandboxId>.<domain>} for a configured domain: always the proxy (the path is forwarded
 *       unchanged). With no domain configured, a Host whose first label is {@code <port>-<sandboxId>} (a valid id)
 *       under any domain: {@code 8000-<id>.localhost:3000}, {@code 8000-<id>.e2b.app} (what the SDK's
 *       {@code getHost} builds);</li>
 *   <li>routing headers ({@code E2b-Sandbox-Id}/{@code x-agentenv-sandbox-id} with
 *       {@code E2b-Sandbox-Port}/{@code x-agentenv-target-port}): the headers win over every control-plane route, so
 *       {@code /health} and {@code /files} with them go to the sandbox and {@code E2B_SANDBOX_URL} can equal
 *       {@code E2B_API_URL} (the path is forwarded unchanged);</li>
 *   <li>{@code /proxy/<sandboxId>/<port>[/rest]}: forwarded as {@code /rest} ({@code /} when empty);</li>
 *   <li>{@code GET|POST /files?...&signature=v1_...} with none of the above: routed by its signature;</li>
 *   <li>anything else is the control plane's.</li>
 * </ol>
 * No I/O, no state: safe for concurrent use.
 */
public final class RouteClassifier {
    static final List<String> SANDBOX_ID_HEADERS = List.of("E2b-Sandbox-Id", "x-agentenv-sandbox-id");
    static final List<String> PORT_HEADERS = List.of("E2b-Sandbox-Port", "x-agentenv-target-port");
    static final String PATH_PREFIX = "/proxy/";

    private final List<String> domains;

    public RouteClassifier(List<String> domains) {
        this.domains = List.copyOf(requireNonNull(domains, "domains is null"));
    }

    /**
     * Classifies one request.
     *
     * @param host    the Host header (null when absent)
     * @param rawPath the request path as sent (percent-encoding kept)
     * @param query   the raw query without '?', or null
     */
    public ProxyRoute classify(String method, String host, String rawPath, String query, HttpFields headers) {
        String path = rawPath == null || rawPath.isEmpty() ? "/" : rawPath;
        String suffix = query == null ? "" : "?" + query;

        ProxyRoute byHost = byHost(host, path + suffix);
        if (byHost != null) {
            return byHost;
        }
        String idHeader = first(headers, SANDBOX_ID_HEADERS);
        String portHeader = first(headers, PORT_HEADERS);
        if (idHeader != null || portHeader != null) {
            if (idHeader == null) {
                return new ProxyRoute.Malformed("the E2b-Sandbox-Port header needs an E2b-Sandbox-Id header");
            }
            if (portHeader == null) {
                return new ProxyRoute.Malformed("the E2b-Sandbox-Id header needs an E2b-Sandbox-Port header");
            }
            return targeted(idHeader.trim(), portHeader.trim(), path + suffix);
        }
        if (path.startsWith(PATH_PREFIX)) {
            String rest = path.substring(PATH_PREFIX.length());
            int slash1 = rest.indexOf('/');
            if (slash1 < 0) {
                return new ProxyRoute.Malformed("proxy paths are /proxy/<sandboxId>/<port>/<path>");
            }
            String id = rest.substring(0, slash1);
            String afterId = rest.substring(slash1 + 1);
            int slash2 = afterId.indexOf('/');
            String port = slash2 < 0 ? afterId : afterId.substring(0, slash2);
            String forwarded = slash2 < 0 ? "/" : afterId.substring(slash2);
            return targeted(id, port, forwarded + suffix);
        }
        if (("GET".equals(method) || "POST".equals(method))
                && "/files".equals(path)
                && query != null
                && SignedUrl.hasSignature(query)) {
            return new ProxyRoute.SignedFiles(path + suffix);
        }
        return new ProxyRoute.ControlPlane();
    }

    /**
     * {@code <port>-<id>.<domain>}; null when the host is not under a configured domain, or, with none configured, when
     * its first label is not {@code <port>-<valid sandbox id>}.
     */
    private ProxyRoute byHost(String host, String pathAndQuery) {
        if (host == null) {
            return null;
        }
        String h = host.trim().toLowerCase(Locale.ROOT);
        String hostOnly = h;
        int colon = h.lastIndexOf(':');
        if (colon > 0 && h.indexOf(']') < colon) {
            hostOnly = h.substring(0, colon);
        }
        hostOnly = hostOnly.endsWith(".") ? hostOnly.substring(0, hostOnly.length() - 1) : hostOnly;
        String withPort = colon > 0 ? hostOnly + h.substring(colon) : hostOnly;
        if (domains.isEmpty()) {
            return underAnyDomain(hostOnly, pathAndQuery);
        }
        for (String domain : domains) {
            String candidate = domain.indexOf(':') >= 0 ? withPort : hostOnly;
            if (candidate.endsWith("." + domain)) {
                String label = candidate.substring(0, candidate.length() - domain.length() - 1);
                int dash = label.indexOf('-');
                if (label.indexOf('.') >= 0 || dash < 0) {
                    return new ProxyRoute.Malformed("sandbox hosts are <port>-<sandboxId>." + domain);
                }
                return targeted(label.substring(dash + 1), label.substring(0, dash), pathAndQuery);
            }
        }
        return null;
    }

    /** A host {@code <port>-<valid id>.<anything>}: the proxy; any other host is the control plane's (null). */
    private static ProxyRoute underAnyDomain(String hostOnly, String pathAndQuery) {
        int dot = hostOnly.indexOf('.');
        if (dot <= 0 || dot == hostOnly.length() - 1) {
            return null;
        }
        String label = hostOnly.substring(0, dot);
        int dash = label.indexOf('-');
        if (dash <= 0
                || !label.substring(0, dash).chars().allMatch(c -> c >= '0' && c <= '9')
                || !SandboxId.isValid(label.substring(dash + 1))) {
            return null;
        }
        return targeted(label.substring(dash + 1), label.substring(0, dash), pathAndQuery);
    }

    private static ProxyRoute targeted(String id, String port, String pathAndQuery) {
        if (!SandboxId.isValid(id)) {
            return new ProxyRoute.Malformed("invalid sandbox id");
        }
        int p = parsePort(port);
        if (p < 1) {
            return new ProxyRoute.Malformed("invalid sandbox port");
        }
        return new ProxyRoute.Targeted(id, p, pathAndQuery);
    }

    private static int parsePort(String text) {
        if (text.isEmpty() || text.length() > 5) {
            return -1;
        }
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) < '0' || text.charAt(i) > '9') {
                return -1;
            }
        }
        int port = Integer.parseInt(text);
        return port <= 65535 ? port : -1;
    }

    private static String first(HttpFields headers, List<String> names) {
        for (String name : names) {
            String value = headers.get(name);
            if (value != null) {
                return value;
            }
        }
        return null;
    }
}
