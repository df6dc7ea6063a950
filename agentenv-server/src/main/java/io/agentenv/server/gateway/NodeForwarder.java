package io.agentenv.server.gateway;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.NodeInfo;
import io.agentenv.server.proxy.ProblemReply;
import io.agentenv.server.proxy.ProxyProblem;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.proxy.ProxyHandler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Jetty's reverse proxy, pointed at the node {@link GatewayHandler} chose (a request attribute). Both bodies stream
 * with back-pressure; every end-to-end header travels unchanged, the caller's Host included (a node's proxy routes
 * {@code <port>-<id>.<domain>} by it), and {@code X-Forwarded-*} are added. What the node answers is what the caller
 * gets, errors included; a node that cannot be reached is a 502 (503 after the headers timeout: 504) in the API's
 * JSON error form.
 */
final class NodeForwarder extends ProxyHandler {
    private static final Logger log = LoggerFactory.getLogger(NodeForwarder.class);
    static final String NODE_ATTRIBUTE = NodeForwarder.class.getName() + ".node";
    /** The request's route class, for the metrics. */
    static final String ROUTE_ATTRIBUTE = NodeForwarder.class.getName() + ".route";
    /** When the gateway received the request ({@link System#nanoTime()}), for the metrics. */
    static final String STARTED_ATTRIBUTE = NodeForwarder.class.getName() + ".started";

    private final Duration connectTimeout;
    private final Consumer<Request> unreachable;
    private final GatewayMetrics metrics;

    /**
     * @param unreachable told about a request whose node could not be reached (the gateway forgets what it cached)
     */
    NodeForwarder(Duration connectTimeout, Consumer<Request> unreachable, GatewayMetrics metrics) {
        this.connectTimeout = requireNonNull(connectTimeout, "connectTimeout is null");
        this.unreachable = requireNonNull(unreachable, "unreachable is null");
        this.metrics = requireNonNull(metrics, "metrics is null");
    }

    /** Times the node's answer: from the request's arrival to the head of the node's response. */
    @Override
    protected void sendProxyToServerRequest(
            Request clientToProxyRequest,
            org.eclipse.jetty.client.Request proxyToServerRequest,
            Response proxyToClientResponse,
            Callback proxyToClientCallback) {
        if (clientToProxyRequest.getAttribute(STARTED_ATTRIBUTE) instanceof Long started
                && clientToProxyRequest.getAttribute(ROUTE_ATTRIBUTE) instanceof String route) {
            proxyToServerRequest.onResponseBegin(answer -> metrics.forwarded(route, System.nanoTime() - started));
        }
        super.sendProxyToServerRequest(
                clientToProxyRequest, proxyToServerRequest, proxyToClientResponse, proxyToClientCallback);
    }

    @Override
    protected HttpClient newHttpClient() {
        HttpClient client = super.newHttpClient();
        if (client.getExecutor() instanceof QueuedThreadPool threads) {
            threads.setName("aenv-gateway-client");
        }
        return client;
    }

    @Override
    protected void configureHttpClient(HttpClient client) {
        super.configureHttpClient(client);
        client.setConnectTimeout(connectTimeout.toMillis());
        client.setIdleTimeout(0); // streams (process output, watches) stay open as long as the node keeps them
        client.setMaxConnectionsPerDestination(8192); // every open stream holds one HTTP/1.1 connection
        client.setMaxRequestsQueuedPerDestination(8192);
        client.setUserAgentField(null); // the caller's User-Agent is copied, none is added
    }

    @Override
    protected HttpURI rewriteHttpURI(Request request) {
        URI node = node(request).address();
        HttpURI uri = request.getHttpURI();
        return HttpURI.build()
                .scheme(node.getScheme())
                .host(node.getHost())
                .port(node.getPort())
                .path(uri.getPath())
                .query(uri.getQuery());
    }

    @Override
    protected void onServerToProxyResponseFailure(
            Request clientToProxyRequest,
            org.eclipse.jetty.client.Request proxyToServerRequest,
            org.eclipse.jetty.client.Response serverToProxyResponse,
            Response proxyToClientResponse,
            Callback proxyToClientCallback,
            Throwable failure) {
        NodeInfo node = node(clientToProxyRequest);
        log.atDebug()
                .addKeyValue("node", node.id().value())
                .addKeyValue("path", clientToProxyRequest.getHttpURI().getPath())
                .addKeyValue("error", failure.toString())
                .log("gateway: forwarding failed");
        if (serverToProxyResponse == null || serverToProxyResponse.getStatus() == 0) {
            unreachable.accept(clientToProxyRequest);
        }
        if (proxyToClientResponse.isCommitted()) {
            proxyToClientCallback.failed(failure);
            return;
        }
        boolean timedOut = failure instanceof TimeoutException || failure.getCause() instanceof TimeoutException;
        metrics.upstreamFailure(node.id(), timedOut ? 504 : 502);
        ProblemReply.write(
                proxyToClientResponse,
                proxyToClientCallback,
                ProxyProblem.of(
                        timedOut ? 504 : 502,
                        "node " + node.id().value() + (timedOut ? " did not answer in time" : " is not reachable")));
    }

    static NodeInfo node(Request request) {
        return (NodeInfo) requireNonNull(request.getAttribute(NODE_ATTRIBUTE), "no node chosen for the request");
    }
}
