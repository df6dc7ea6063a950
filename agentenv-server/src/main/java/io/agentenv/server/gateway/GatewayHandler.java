package io.agentenv.server.gateway;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.LostSandbox;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.NodeInfo;
import io.agentenv.cluster.NodeState;
import io.agentenv.cluster.SandboxOwners;
import io.agentenv.server.credentials.ApiKey;
import io.agentenv.server.credentials.SandboxTokens;
import io.agentenv.server.metrics.PrometheusText;
import io.agentenv.server.proxy.ProblemReply;
import io.agentenv.server.proxy.ProxyProblem;
import io.agentenv.server.proxy.SignedFiles;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's one handler: classifies a request ({@link GatewayRoutes}), picks its node and hands it to
 * {@link NodeForwarder} (a stream) or {@link CreatePlacer} (a create); answers {@code /health} and the node routes
 * itself. For a sandbox's requests the node is its owner. A paused sandbox whose owner is gone, draining or dead is
 * resumed by a node placement picks, and its other requests go to any node (every node reads the cluster's records,
 * and a paused sandbox may be taken over). A lost sandbox's control-plane requests are answered 404 with why it was
 * lost; a sandbox no record names goes to any node, which answers as it would for an unknown id. A signed
 * {@code /files} URL goes to the owner of the running sandbox whose envd token signed it (found as a node's proxy
 * finds it, over the cluster's running sandboxes); {@code GET /sandboxes/metrics} for several sandboxes asks each
 * owner ({@link SandboxMetricsFanOut}). Every finished request is counted by route class and status
 * ({@link GatewayMetrics}, served at {@code GET /metrics} without a key, as a node serves its own).
 */
final class GatewayHandler extends Handler.Abstract {
    private static final Logger log = LoggerFactory.getLogger(GatewayHandler.class);
    private static final String API_KEY_HEADER = "X-API-Key";
    /** The sandbox an owned request was forwarded for (so that an unreachable owner is looked up again). */
    static final String SANDBOX_ATTRIBUTE = GatewayHandler.class.getName() + ".sandbox";

    private final GatewayRoutes routes;
    private final ClusterView cluster;
    private final OwnerCache owners;
    private final SandboxOwners registry;
    private final Placement placement;
    private final NodeForwarder forwarder;
    private final GatewayWebSockets webSockets;
    private final CreatePlacer creates;
    private final NodeEndpoints nodes;
    private final ApiKey apiKey;
    private final GatewayMetrics metrics;
    private final SandboxMetricsFanOut sandboxMetrics;
    /** Derived from the cluster's token seed once a node stored it (the seed never changes). */
    private volatile SandboxTokens tokens;

    GatewayHandler(
            GatewayRoutes routes,
            ClusterView cluster,
            OwnerCache owners,
            SandboxOwners registry,
            Placement placement,
            NodeForwarder forwarder,
            GatewayWebSockets webSockets,
            CreatePlacer creates,
            NodeEndpoints nodes,
            ApiKey apiKey,
            GatewayMetrics metrics,
            SandboxMetricsFanOut sandboxMetrics) {
        this.routes = requireNonNull(routes, "routes is null");
        this.cluster = requireNonNull(cluster, "cluster is null");
        this.owners = requireNonNull(owners, "owners is null");
        this.registry = requireNonNull(registry, "registry is null");
        this.placement = requireNonNull(placement, "placement is null");
        this.forwarder = requireNonNull(forwarder, "forwarder is null");
        this.webSockets = requireNonNull(webSockets, "webSockets is null");
        this.creates = requireNonNull(creates, "creates is null");
        this.nodes = requireNonNull(nodes, "nodes is null");
        this.apiKey = requireNonNull(apiKey, "apiKey is null");
        this.metrics = requireNonNull(metrics, "metrics is null");
        this.sandboxMetrics = requireNonNull(sandboxMetrics, "sandboxMetrics is null");
    }

    @Override
    public boolean handle(Request request, Response response, Callback served) throws Exception {
        long started = System.nanoTime();
        HttpURI uri = request.getHttpURI();
        GatewayRoute route = routes.classify(
                request.getMethod(),
                request.getHeaders().get(HttpHeader.HOST),
                uri.getPath(),
                uri.getQuery(),
                request.getHeaders());
        String routeClass = routeClass(route);
        request.setAttribute(NodeForwarder.ROUTE_ATTRIBUTE, routeClass);
        request.setAttribute(NodeForwarder.STARTED_ATTRIBUTE, started);
        Callback callback = new Callback.Nested(served) {
            @Override
            public void succeeded() {
                metrics.request(routeClass, response.getStatus());
                super.succeeded();
            }

            @Override
            public void failed(Throwable failure) {
                metrics.request(routeClass, response.isCommitted() ? response.getStatus() : 500);
                super.failed(failure);
            }
        };
        try {
            switch (route) {
                case GatewayRoute.Health ignored -> health(response, callback);
                case GatewayRoute.Metrics ignored -> scrape(response, callback);
                case GatewayRoute.ListNodes ignored -> {
                    authenticate(request, "GET");
                    nodes.list(response, callback);
                }
                case GatewayRoute.ShowNode show -> {
                    authenticate(request, "GET");
                    nodes.show(show.nodeId(), response, callback);
                }
                case GatewayRoute.ChangeNode change -> {
                    authenticate(request, "POST");
                    nodes.change(change.nodeId(), request, response, callback);
                }
                case GatewayRoute.Refused refused -> throw ProxyProblem.of(refused.status(), refused.message());
                case GatewayRoute.Create ignored -> creates.handle(request, response, callback);
                case GatewayRoute.Keyed keyed ->
                    forward(
                            request,
                            response,
                            callback,
                            cluster.byKey(keyed.key()).orElseThrow(GatewayHandler::noNode));
                case GatewayRoute.AnyNode ignored ->
                    forward(request, response, callback, cluster.anyNode().orElseThrow(GatewayHandler::noNode));
                case GatewayRoute.Owned owned -> {
                    request.setAttribute(SANDBOX_ATTRIBUTE, owned.sandboxId());
                    forward(request, response, callback, ownerOf(owned));
                }
                case GatewayRoute.SignedFiles ignored -> signedFiles(request, response, callback);
                case GatewayRoute.ManySandboxMetrics ignored -> manySandboxMetrics(request, response, callback);
            }
        } catch (ProxyProblem problem) {
            ProblemReply.write(response, callback, problem);
        }
        return true;
    }

    /** The class a request is counted under in the metrics (never an id, so the label set stays small). */
    static String routeClass(GatewayRoute route) {
        return switch (route) {
            case GatewayRoute.Health ignored -> "health";
            case GatewayRoute.Metrics ignored -> "metrics";
            case GatewayRoute.ListNodes ignored -> "nodes";
            case GatewayRoute.ShowNode ignored -> "nodes";
            case GatewayRoute.ChangeNode ignored -> "nodes";
            case GatewayRoute.Refused ignored -> "refused";
            case GatewayRoute.Create ignored -> "create";
            case GatewayRoute.Keyed keyed -> keyed.key().equals(GatewayRoutes.VOLUMES_KEY) ? "volumes" : "template";
            case GatewayRoute.AnyNode ignored -> "any";
            case GatewayRoute.Owned owned -> owned.traffic() ? "traffic" : "sandbox";
            case GatewayRoute.SignedFiles ignored -> "signed_files";
            case GatewayRoute.ManySandboxMetrics ignored -> "sandbox_metrics";
        };
    }

    /**
     * A signed {@code /files} URL: the running sandbox whose envd token made the signature, found among the cluster's
     * (one database read, one hash per running sandbox, as a node's proxy does over what it lists), and its owner
     * serves it. When none matches, any node answers, as it would (401).
     */
    private void signedFiles(Request request, Response response, Callback callback) throws Exception {
        Optional<String> sandbox;
        Map<String, NodeId> running;
        try {
            SandboxTokens derive = tokens();
            running = derive == null ? Map.of() : registry.running();
            sandbox = derive == null
                    ? Optional.empty()
                    : SignedFiles.signer(
                            request.getHttpURI().getQuery(),
                            request.getMethod(),
                            running.keySet(),
                            derive::envdAccessToken);
        } catch (RuntimeException e) {
            log.atWarn().setCause(e).log("gateway: the cluster database cannot be read");
            throw ProxyProblem.of(503, "the cluster's database cannot be reached; try again");
        }
        if (sandbox.isEmpty()) {
            forward(request, response, callback, cluster.anyNode().orElseThrow(GatewayHandler::noNode));
            return;
        }
        request.setAttribute(SANDBOX_ATTRIBUTE, sandbox.get());
        NodeId ownerId = running.get(sandbox.get());
        Optional<NodeInfo> owner = cluster.node(ownerId);
        if (owner.isEmpty() || !cluster.serving(owner.get())) {
            metrics.upstreamFailure(ownerId, 503);
            throw ProxyProblem.of(
                    503, "sandbox " + sandbox.get() + " runs on node " + ownerId.value() + ", which is not responding");
        }
        forward(request, response, callback, owner.get());
    }

    private SandboxTokens tokens() {
        SandboxTokens known = tokens;
        if (known == null) {
            Optional<String> seed = registry.tokenSeed();
            if (seed.isPresent()) {
                known = new SandboxTokens(seed.get());
                tokens = known;
            }
        }
        return known;
    }

    private void manySandboxMetrics(Request request, Response response, Callback callback) throws Exception {
        Optional<SandboxMetricsFanOut.Plan> plan = sandboxMetrics.plan(request);
        if (plan.isEmpty()) { // nothing any node holds, or a request every node refuses alike: one node answers
            forward(request, response, callback, cluster.anyNode().orElseThrow(GatewayHandler::noNode));
            return;
        }
        SandboxMetricsFanOut.Answer answer = sandboxMetrics.ask(request, plan.get());
        metrics.forwarded(
                "sandbox_metrics", System.nanoTime() - (Long) request.getAttribute(NodeForwarder.STARTED_ATTRIBUTE));
        response.setStatus(answer.status());
        if (answer.contentType() != null) {
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, answer.contentType());
        }
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, answer.body().length);
        response.write(true, ByteBuffer.wrap(answer.body()), callback);
    }

    private void scrape(Response response, Callback callback) {
        byte[] body = metrics.render().getBytes(StandardCharsets.UTF_8);
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, PrometheusText.CONTENT_TYPE);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
    }

    /** Where an owned route goes; throws the answer when it goes nowhere. */
    private NodeInfo ownerOf(GatewayRoute.Owned route) throws ProxyProblem {
        Optional<SandboxOwners.Ownership> ownership;
        try {
            ownership = owners.owner(route.sandboxId(), !route.traffic());
        } catch (RuntimeException e) {
            log.atWarn().setCause(e).log("gateway: the cluster database cannot be read");
            throw ProxyProblem.of(503, "the cluster's database cannot be reached; try again");
        }
        if (ownership.isEmpty()) {
            if (!route.traffic()) {
                Optional<LostSandbox> lost = registry.lost(route.sandboxId());
                if (lost.isPresent()) {
                    throw ProxyProblem.of(
                            404,
                            "sandbox " + route.sandboxId() + " was lost: its node "
                                    + lost.get().node().value()
                                    + " was declared dead at " + lost.get().lostAt() + " ("
                                    + lost.get().reason()
                                    + ")");
                }
            }
            return cluster.anyNode().orElseThrow(GatewayHandler::noNode); // it answers "not found" as a node does
        }
        Optional<NodeInfo> owner = ownership.get().node().flatMap(cluster::node);
        boolean ownerServes = owner.isPresent() && cluster.serving(owner.get());
        if (ownership.get().paused()) {
            boolean ownerTakesIt = ownerServes && owner.get().state() == NodeState.ACTIVE;
            if (ownerTakesIt) {
                return owner.get();
            }
            if (route.mayResume()) {
                List<NodeInfo> candidates = placement.candidates(Optional.empty());
                if (candidates.isEmpty()) {
                    throw noNode();
                }
                return candidates.getFirst();
            }
            return ownerServes ? owner.get() : cluster.anyNode().orElseThrow(GatewayHandler::noNode);
        }
        if (ownerServes) {
            return owner.get();
        }
        String node = ownership.get().node().map(n -> n.value()).orElse("?");
        ownership.get().node().ifPresent(n -> metrics.upstreamFailure(n, 503));
        throw ProxyProblem.of(
                503, "sandbox " + route.sandboxId() + " runs on node " + node + ", which is not responding");
    }

    private void forward(Request request, Response response, Callback callback, NodeInfo node) throws Exception {
        request.setAttribute(NodeForwarder.NODE_ATTRIBUTE, node);
        if (GatewayWebSockets.isUpgrade(request)) {
            webSockets.bridge(request, response, callback, node);
            return;
        }
        forwarder.handle(request, response, callback);
    }

    private void health(Response response, Callback callback) {
        boolean any = cluster.nodes().stream().anyMatch(cluster::serving);
        response.setStatus(any ? 204 : 503);
        callback.succeeded();
    }

    private void authenticate(Request request, String method) throws ProxyProblem {
        if (!method.equals(request.getMethod())) {
            throw ProxyProblem.of(405, "method not allowed");
        }
        List<String> presented = request.getHeaders().getValuesList(API_KEY_HEADER);
        if (presented.isEmpty()) {
            throw ProxyProblem.of(401, "missing " + API_KEY_HEADER + " header");
        }
        if (presented.size() != 1 || !apiKey.matches(presented.getFirst())) {
            throw ProxyProblem.of(401, "invalid API key");
        }
    }

    private static ProxyProblem noNode() {
        return ProxyProblem.of(503, "no node of the cluster is serving");
    }
}
