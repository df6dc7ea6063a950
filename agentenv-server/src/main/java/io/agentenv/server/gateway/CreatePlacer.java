package io.agentenv.server.gateway;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.NodeInfo;
import io.agentenv.server.proxy.ProblemReply;
import io.agentenv.server.proxy.ProxyProblem;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Places {@code POST /sandboxes}: reads the (small) body, asks {@link Placement} for the candidates for its
 * {@code templateID} (a create that mounts volumes goes to the node that holds the volumes, unless every node keeps
 * them in the cluster's shared volume directory), and sends it to the best
 * one; a node that refuses the connection, or answers 429 or 503 (full, or shutting down), is passed over for the
 * next. The chosen node's answer is relayed as it is, errors included.
 */
final class CreatePlacer {
    private static final Logger log = LoggerFactory.getLogger(CreatePlacer.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_ATTEMPTS = 3;
    private static final Set<String> NOT_COPIED = Set.of(
            "connection",
            "keep-alive",
            "transfer-encoding",
            "te",
            "trailer",
            "upgrade",
            "proxy-connection",
            "content-length");

    private final Placement placement;
    private final ClusterView cluster;
    private final HttpClientSource http;
    private final int maxBodyBytes;
    private final Duration timeout;
    private final OwnerCache owners;
    private final GatewayMetrics metrics;

    /** The HTTP client to send with (the forwarder's, which exists once it started). */
    @FunctionalInterface
    interface HttpClientSource {
        HttpClient get();
    }

    CreatePlacer(
            Placement placement,
            ClusterView cluster,
            HttpClientSource http,
            int maxBodyBytes,
            Duration timeout,
            OwnerCache owners,
            GatewayMetrics metrics) {
        this.metrics = requireNonNull(metrics, "metrics is null");
        this.placement = requireNonNull(placement, "placement is null");
        this.owners = requireNonNull(owners, "owners is null");
        this.cluster = requireNonNull(cluster, "cluster is null");
        this.http = requireNonNull(http, "http is null");
        this.maxBodyBytes = maxBodyBytes;
        this.timeout = requireNonNull(timeout, "timeout is null");
    }

    void handle(Request request, Response response, Callback callback) throws IOException, InterruptedException {
        long started = System.nanoTime();
        byte[] body;
        try (InputStream in = Content.Source.asInputStream(request)) {
            body = in.readNBytes(maxBodyBytes + 1);
        }
        if (body.length > maxBodyBytes) {
            ProblemReply.write(
                    response, callback, ProxyProblem.of(413, "request body larger than " + maxBodyBytes + " bytes"));
            return;
        }
        Optional<JsonNode> parsed = parse(body);
        List<NodeInfo> candidates = mountsVolumes(parsed) && !cluster.volumesShared()
                ? cluster.byKey(GatewayRoutes.VOLUMES_KEY).stream().toList()
                : placement.candidates(parsed.map(p -> p.path("templateID"))
                        .filter(JsonNode::isTextual)
                        .map(JsonNode::asText));
        if (candidates.isEmpty()) {
            ProblemReply.write(response, callback, ProxyProblem.of(503, "no node takes new sandboxes"));
            return;
        }
        ContentResponse answer = null;
        NodeInfo answered = null;
        for (int attempt = 0; attempt < Math.min(MAX_ATTEMPTS, candidates.size()); attempt++) {
            NodeInfo node = candidates.get(attempt);
            try {
                answer = send(request, node, body);
                answered = node;
                if (answer.getStatus() != 429 && answer.getStatus() != 503) {
                    break;
                }
                metrics.retried(node.id(), answer.getStatus() == 429 ? "full" : "unavailable");
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof ConnectException)) {
                    metrics.upstreamFailure(node.id(), 502);
                    ProblemReply.write(
                            response,
                            callback,
                            ProxyProblem.of(502, "node " + node.id().value() + " failed during the create"));
                    return;
                }
                metrics.retried(node.id(), "refused");
                log.atInfo()
                        .addKeyValue("node", node.id().value())
                        .log("gateway: node refused the connection; placing the create on the next node");
            } catch (TimeoutException e) {
                metrics.upstreamFailure(node.id(), 504);
                ProblemReply.write(
                        response,
                        callback,
                        ProxyProblem.of(504, "node " + node.id().value() + " did not answer the create in time"));
                return;
            }
        }
        if (answer == null) {
            ProblemReply.write(response, callback, ProxyProblem.of(502, "no node could be reached for the create"));
            return;
        }
        metrics.forwarded("create", System.nanoTime() - started);
        metrics.placed(answered.id(), answer.getStatus());
        log.atDebug()
                .addKeyValue("node", answered.id().value())
                .addKeyValue("status", answer.getStatus())
                .log("gateway: create placed");
        if (answer.getStatus() == 201 || answer.getStatus() == 200) {
            NodeId owner = answered.id();
            parse(answer.getContent())
                    .map(created -> created.path("sandboxID"))
                    .filter(JsonNode::isTextual)
                    .ifPresent(id -> owners.remember(id.asText(), owner));
        }
        relay(answer, response, callback);
    }

    private ContentResponse send(Request request, NodeInfo node, byte[] body)
            throws InterruptedException, ExecutionException, TimeoutException {
        String pathQuery = request.getHttpURI().getPathQuery();
        org.eclipse.jetty.client.Request out = http.get()
                .newRequest(node.address().resolve(pathQuery))
                .method(HttpMethod.POST)
                .timeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
        String contentType = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
        out.headers(headers -> {
            for (HttpField field : request.getHeaders()) {
                if (!NOT_COPIED.contains(field.getLowerCaseName())) {
                    headers.add(field);
                }
            }
            headers.put(HttpHeader.X_FORWARDED_FOR, Request.getRemoteAddr(request));
        });
        out.body(new BytesRequestContent(contentType == null ? "application/json" : contentType, body));
        return out.send();
    }

    private static void relay(ContentResponse answer, Response response, Callback callback) {
        response.setStatus(answer.getStatus());
        for (HttpField field : answer.getHeaders()) {
            if (!NOT_COPIED.contains(field.getLowerCaseName())) {
                response.getHeaders().add(field);
            }
        }
        byte[] content = answer.getContent();
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, content.length);
        response.write(true, ByteBuffer.wrap(content), callback);
    }

    private static Optional<JsonNode> parse(byte[] body) {
        try {
            JsonNode node = JSON.readTree(body);
            return node != null && node.isObject() ? Optional.of(node) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty(); // the node answers 400 with its own words
        }
    }

    private static boolean mountsVolumes(Optional<JsonNode> body) {
        return body.map(b -> b.path("volumeMounts"))
                .map(v -> v.isArray() && !v.isEmpty())
                .orElse(false);
    }
}
