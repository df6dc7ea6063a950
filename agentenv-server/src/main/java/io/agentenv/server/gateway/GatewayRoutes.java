package io.agentenv.server.gateway;

import static java.util.Objects.requireNonNull;

import io.agentenv.server.proxy.ProxyRoute;
import io.agentenv.server.proxy.RouteClassifier;
import io.agentenv.spi.SandboxId;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import org.eclipse.jetty.http.HttpFields;

/**
 * Decides where the gateway sends a request, in this order:
 * <ol>
 *   <li>traffic for a sandbox's port, as the node's proxy recognises it (Host {@code <port>-<id>.<domain>}, the
 *       routing headers, {@code /proxy/<id>/<port>/...}): the sandbox's owner;</li>
 *   <li>{@code /health}, {@code /metrics} and {@code /nodes[/<id>]}: the gateway itself;</li>
 *   <li>{@code GET /sandboxes/metrics?sandbox_ids=...}: each id's owner, the answers merged;</li>
 *   <li>{@code /sandboxes/<id>[/...]} and {@code /v2/sandboxes/<id>/...}: the owner ({@code resume} and
 *       {@code connect} may resume it elsewhere);</li>
 *   <li>{@code POST /sandboxes}: placement;</li>
 *   <li>a template's builds and files ({@code /templates/<id>/...}, {@code /v2/templates/<id>/builds/...}): one node
 *       per template; volumes ({@code /volumes...}, {@code /volumecontent/...}): one node for all (their disks are
 *       that node's files; with a shared volume directory any node would do, and this one still does);</li>
 *   <li>anything else: any live node.</li>
 * </ol>
 * A signed {@code /files} URL names no sandbox: the handler finds the sandbox whose token signed it, as a node's proxy
 * does, and sends it to that sandbox's owner.
 * No I/O, no state.
 */
final class GatewayRoutes {
    /** The key every volume request is sent by: volumes are files on one node's disk. */
    static final String VOLUMES_KEY = "volumes";

    /** A versioned API path's first segment ({@code /v2/sandboxes}). */
    private static final Pattern VERSION = Pattern.compile("v[0-9]+");

    private final RouteClassifier proxyRoutes;

    GatewayRoutes(List<String> sandboxDomains) {
        this.proxyRoutes = new RouteClassifier(requireNonNull(sandboxDomains, "sandboxDomains is null"));
    }

    GatewayRoute classify(String method, String host, String rawPath, String query, HttpFields headers) {
        String path = rawPath == null || rawPath.isEmpty() ? "/" : rawPath;
        switch (proxyRoutes.classify(method, host, path, query, headers)) {
            case ProxyRoute.Targeted targeted -> {
                return new GatewayRoute.Owned(targeted.sandboxId(), true, true);
            }
            case ProxyRoute.Malformed malformed -> {
                return new GatewayRoute.Refused(400, malformed.message());
            }
            case ProxyRoute.SignedFiles ignored -> {
                return new GatewayRoute.SignedFiles();
            }
            case ProxyRoute.ControlPlane ignored -> {}
        }
        List<String> segments = segments(path);
        if (segments.size() == 1 && segments.getFirst().equals("health")) {
            return new GatewayRoute.Health();
        }
        if (segments.size() == 1 && segments.getFirst().equals("metrics") && "GET".equals(method)) {
            return new GatewayRoute.Metrics();
        }
        if (segments.equals(List.of("sandboxes", "metrics")) && "GET".equals(method)) {
            return new GatewayRoute.ManySandboxMetrics();
        }
        if (!segments.isEmpty() && segments.getFirst().equals("nodes")) {
            return switch (segments.size()) {
                case 1 -> new GatewayRoute.ListNodes();
                case 2 ->
                    "POST".equals(method)
                            ? new GatewayRoute.ChangeNode(segments.get(1))
                            : new GatewayRoute.ShowNode(segments.get(1));
                default -> new GatewayRoute.Refused(404, "no such route");
            };
        }
        List<String> unversioned =
                segments.size() > 1 && VERSION.matcher(segments.getFirst()).matches()
                        ? segments.subList(1, segments.size())
                        : segments;
        if (unversioned.size() >= 2
                && unversioned.getFirst().equals("sandboxes")
                && SandboxId.isValid(unversioned.get(1))) {
            String last = unversioned.getLast();
            boolean mayResume = unversioned.size() == 3 && (last.equals("resume") || last.equals("connect"));
            return new GatewayRoute.Owned(unversioned.get(1), mayResume, false);
        }
        if (unversioned.size() == 1 && unversioned.getFirst().equals("sandboxes") && "POST".equals(method)) {
            return new GatewayRoute.Create();
        }
        if (unversioned.size() >= 3
                && unversioned.getFirst().equals("templates")
                && (unversioned.get(2).equals("builds") || unversioned.get(2).equals("files"))) {
            return new GatewayRoute.Keyed("template/" + unversioned.get(1));
        }
        if (!unversioned.isEmpty()
                && (unversioned.getFirst().equals("volumes")
                        || unversioned.getFirst().equals("volumecontent"))) {
            return new GatewayRoute.Keyed(VOLUMES_KEY);
        }
        return new GatewayRoute.AnyNode();
    }

    /** The path's non-empty segments, still percent-encoded (ids and keywords never need decoding). */
    private static List<String> segments(String path) {
        return Arrays.stream(path.split("/")).filter(s -> !s.isEmpty()).toList();
    }
}
