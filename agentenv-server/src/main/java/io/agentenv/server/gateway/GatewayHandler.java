package io.agentenv.server.gateway;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.LostSandbox;
import io.agentenv.cluster.NodeInfo;
import io.agentenv.cluster.NodeState;
import io.agentenv.cluster.SandboxOwners;
import io.agentenv.server.credentials.ApiKey;
import io.agentenv.server.credentials.SandboxTokens;
import io.agentenv.server.proxy.ProblemReply;
import io.agentenv.server.proxy.ProxyProblem;
import io.agentenv.server.proxy.SignedUrl;
import java.util.List;
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
 * lost; a sandbox no record names goes to any node, which answers as it would for an unknown id. A signed envd files
 * URL goes to the owner of the running sandbox whose token signed it (found with the cluster's token seed, as a node
 * finds it), since only the owner can serve it.
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
    /** The cluster's sandbox tokens, once the token seed was read (it never changes). */
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
            ApiKey apiKey) {
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
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        HttpURI uri = request.getHttpURI();
        GatewayRoute route = routes.classify(
                request.getMethod(),
                request.getHeaders().get(HttpHeader.HOST),
                uri.getPath(),
                uri.getQuery(),
                request.getHeaders());
        try {
            switch (route) {
                case GatewayRoute.Health ignored -> health(response, callback);
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
                case GatewayRoute.Signed signed -> {
                    GatewayRoute.Owned owned = new GatewayRoute.Owned(signer(signed, request.getMethod()), false, true);
                    request.setAttribute(SANDBOX_ATTRIBUTE, owned.sandboxId());
                    forward(request, response, callback, ownerOf(owned));
                }
            }
        } catch (ProxyProblem problem) {
            ProblemReply.write(response, callback, problem);
        }
        return true;
    }

    /**
     * The running sandbox whose envd token signed the URL (each running sandbox's token is tried, as a node does);
     * 401 when none did, 503 when the database cannot be read. Expiry and the rest are the owner's to check.
     */
    private String signer(GatewayRoute.Signed route, String method) throws ProxyProblem {
        int q = route.pathAndQuery().indexOf('?');
        SignedUrl signed = SignedUrl.parse(q < 0 ? "" : route.pathAndQuery().substring(q + 1))
                .orElseThrow(() -> ProxyProblem.of(401, "invalid signature"));
        String operation = SignedUrl.operation(method).orElseThrow(() -> ProxyProblem.of(401, "invalid signature"));
        List<String> running;
        SandboxTokens known = tokens;
        try {
            if (known == null) {
                Optional<String> seed = registry.tokenSeed();
                if (seed.isEmpty()) {
                    throw ProxyProblem.of(401, "invalid signature"); // no node has made a token yet
                }
                known = new SandboxTokens(seed.get());
                tokens = known;
            }
            running = registry.running();
        } catch (RuntimeException e) {
            log.atWarn().setCause(e).log("gateway: the cluster database cannot be read");
            throw ProxyProblem.of(503, "the cluster's database cannot be reached; try again");
        }
        for (String id : running) {
            if (signed.signedWith(known.envdAccessToken(id), operation)) {
                return id;
            }
        }
        throw ProxyProblem.of(401, "invalid signature");
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
