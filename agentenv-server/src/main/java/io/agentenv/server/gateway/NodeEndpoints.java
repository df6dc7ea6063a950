package io.agentenv.server.gateway;

import static java.util.Objects.requireNonNull;

import io.agentenv.api.model.ClusterNode;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.NodeInfo;
import io.agentenv.cluster.NodeLoad;
import io.agentenv.cluster.NodeRegistry;
import io.agentenv.orchestrator.AgentEnvException;
import io.agentenv.server.api.Json;
import io.agentenv.server.proxy.ProblemReply;
import io.agentenv.server.proxy.ProxyProblem;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The cluster's node routes, answered by the gateway from the registry (E2B's admin shape, with AgentENV's fields):
 * {@code GET /nodes}, {@code GET /nodes/{nodeID}}, and {@code POST /nodes/{nodeID}} with
 * {@code {"status":"draining"}} or {@code {"status":"ready"}} (read into the API's {@link ClusterNode.StatusChange}, as
 * strictly as the API reads bodies; a bad one is a 400 saying what is wrong). A node's {@code status} is {@code ready}
 * (ACTIVE), {@code draining}, {@code unhealthy} (its lease ran out, not yet declared dead) or {@code dead}.
 */
final class NodeEndpoints {
    /** Bodies are read and written as the API does its own (no coercion to a string, no duplicate keys, nothing after). */
    private static final Json BODIES = new Json();

    private static final String USAGE = "the body must be {\"status\": \"draining\"} or {\"status\": \"ready\"}";
    private static final int MAX_BODY_BYTES = 4096;
    private static final String DRAINING = "draining";
    private static final String READY = "ready";

    private final NodeRegistry registry;
    private final ClusterView cluster;

    NodeEndpoints(NodeRegistry registry, ClusterView cluster) {
        this.registry = requireNonNull(registry, "registry is null");
        this.cluster = requireNonNull(cluster, "cluster is null");
    }

    void list(Response response, Callback callback) {
        List<ClusterNode> nodes = registry.nodes().stream()
                .sorted(java.util.Comparator.comparing(n -> n.id().value()))
                .map(this::toJson)
                .toList();
        write(response, callback, 200, nodes);
    }

    void show(String nodeId, Response response, Callback callback) {
        Optional<NodeInfo> node = parse(nodeId).flatMap(registry::find);
        if (node.isEmpty()) {
            ProblemReply.write(response, callback, ProxyProblem.of(404, "node " + nodeId + " not found"));
            return;
        }
        write(response, callback, 200, toJson(node.get()));
    }

    void change(String nodeId, Request request, Response response, Callback callback) throws IOException {
        byte[] body;
        try (InputStream in = Content.Source.asInputStream(request)) {
            body = in.readNBytes(MAX_BODY_BYTES + 1);
        }
        String status;
        try {
            status = statusChange(body).status();
        } catch (ProxyProblem problem) {
            ProblemReply.write(response, callback, problem);
            return;
        }
        Optional<NodeInfo> node = parse(nodeId).flatMap(registry::find);
        if (node.isEmpty()) {
            ProblemReply.write(response, callback, ProxyProblem.of(404, "node " + nodeId + " not found"));
            return;
        }
        if (!registry.setDraining(node.get().id(), status.equals(DRAINING))) {
            ProblemReply.write(
                    response, callback, ProxyProblem.of(409, "node " + nodeId + " is dead: it cannot be changed"));
            return;
        }
        cluster.reload();
        response.setStatus(204);
        callback.succeeded();
    }

    /** The body of {@code POST /nodes/{nodeID}}, read into the API's record; a 400 that says what is wrong. */
    static ClusterNode.StatusChange statusChange(byte[] body) throws ProxyProblem {
        if (body.length > MAX_BODY_BYTES) {
            throw ProxyProblem.of(400, "request body larger than " + MAX_BODY_BYTES + " bytes; " + USAGE);
        }
        ClusterNode.StatusChange change;
        try {
            change = BODIES.read(body, ClusterNode.StatusChange.class, false);
        } catch (AgentEnvException e) {
            throw ProxyProblem.of(400, e.getMessage() + "; " + USAGE);
        }
        if (!(change.status().equals(DRAINING) || change.status().equals(READY))) {
            throw ProxyProblem.of(400, USAGE);
        }
        return change;
    }

    private ClusterNode toJson(NodeInfo node) {
        NodeLoad load = node.load();
        return new ClusterNode(
                node.id().value(),
                cluster.status(node),
                node.address().toString(),
                node.epoch(),
                node.leaseUntil().toString(),
                node.registeredAt().toString(),
                load.slotsUsed(),
                load.slotsMax(),
                new ClusterNode.Metrics(
                        load.cpuCount(), load.cpuLoad(), load.memoryTotalMib() << 20, load.memoryAvailableMib() << 20),
                new TreeMap<>(load.poolStock()),
                List.copyOf(new TreeSet<>(load.localTemplates())));
    }

    private static Optional<NodeId> parse(String nodeId) {
        try {
            return Optional.of(new NodeId(nodeId));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private static void write(Response response, Callback callback, int status, Object body) {
        byte[] bytes = BODIES.writeBytes(body);
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
        response.write(true, ByteBuffer.wrap(bytes), callback);
    }
}
