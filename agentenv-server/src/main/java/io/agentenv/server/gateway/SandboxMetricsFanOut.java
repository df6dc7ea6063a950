package io.agentenv.server.gateway;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.NodeInfo;
import io.agentenv.cluster.SandboxOwners;
import io.agentenv.server.proxy.ProxyProblem;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.client.CompletableResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.Fields;

/**
 * E2B's {@code GET /sandboxes/metrics?sandbox_ids=a,b} over a cluster: each node keeps the metrics of the sandboxes it
 * runs, so the ids are split by owner (one database read for all), each owner is asked for its own (at once, with the
 * caller's headers), and the answers' {@code sandboxes} objects are merged into one answer of the node's shape. Ids no
 * node holds are left out, as a node leaves out unknown ids. An owner that cannot answer fails the whole request with
 * a status and a message naming it, never a partial answer.
 */
final class SandboxMetricsFanOut {
    /** A node's own limit (GuestEndpoints): more ids are refused by the node the request is sent to as it is. */
    static final int MAX_IDS = 100;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> COPIED = Set.of("x-api-key", "authorization", "accept", "user-agent");

    private final SandboxOwners owners;
    private final ClusterView cluster;
    private final CreatePlacer.HttpClientSource http;
    private final Duration timeout;
    private final GatewayMetrics metrics;

    /** One request's plan: each owner and the ids it is asked for; empty when the request goes to a node as it is. */
    record Plan(Map<NodeInfo, List<String>> byNode) {}

    /** What the gateway answers: the merged body, or a node's own non-200 answer relayed. */
    record Answer(int status, String contentType, byte[] body) {}

    SandboxMetricsFanOut(
            SandboxOwners owners,
            ClusterView cluster,
            CreatePlacer.HttpClientSource http,
            Duration timeout,
            GatewayMetrics metrics) {
        this.owners = requireNonNull(owners, "owners is null");
        this.cluster = requireNonNull(cluster, "cluster is null");
        this.http = requireNonNull(http, "http is null");
        this.timeout = requireNonNull(timeout, "timeout is null");
        this.metrics = requireNonNull(metrics, "metrics is null");
    }

    /**
     * The owners to ask; empty when the request is one a node answers alike anywhere (no ids, too many: its 400).
     * Throws 503 when the database cannot be read or an owner is not serving.
     */
    Optional<Plan> plan(Request request) throws ProxyProblem {
        Set<String> ids = ids(Request.extractQueryParameters(request));
        if (ids.isEmpty() || ids.size() > MAX_IDS) {
            return Optional.empty();
        }
        Map<String, SandboxOwners.Ownership> found;
        try {
            found = owners.owners(ids);
        } catch (RuntimeException e) {
            throw ProxyProblem.of(503, "the cluster's database cannot be reached; try again");
        }
        Map<NodeId, List<String>> byOwner = new TreeMap<>((x, y) -> x.value().compareTo(y.value()));
        for (String id : ids) {
            SandboxOwners.Ownership ownership = found.get(id);
            if (ownership != null && ownership.node().isPresent()) {
                byOwner.computeIfAbsent(ownership.node().get(), k -> new ArrayList<>())
                        .add(id);
            }
        }
        Map<NodeInfo, List<String>> byNode = new LinkedHashMap<>();
        for (Map.Entry<NodeId, List<String>> e : byOwner.entrySet()) {
            Optional<NodeInfo> node = cluster.node(e.getKey());
            if (node.isEmpty() || !cluster.serving(node.get())) {
                metrics.upstreamFailure(e.getKey(), 503);
                throw ProxyProblem.of(
                        503,
                        "sandboxes " + String.join(", ", e.getValue()) + " run on node "
                                + e.getKey().value() + ", which is not responding");
            }
            byNode.put(node.get(), e.getValue());
        }
        return byNode.isEmpty() ? Optional.empty() : Optional.of(new Plan(byNode));
    }

    /** Asks every owner at once and merges; a node's 4xx is relayed as it is, anything else that fails is a 502/504. */
    Answer ask(Request request, Plan plan) throws ProxyProblem, InterruptedException {
        Map<NodeInfo, CompletableFuture<ContentResponse>> pending = new LinkedHashMap<>();
        for (Map.Entry<NodeInfo, List<String>> e : plan.byNode().entrySet()) {
            pending.put(e.getKey(), send(request, e.getKey(), e.getValue()));
        }
        ObjectNode merged = JSON.createObjectNode();
        ObjectNode sandboxes = merged.putObject("sandboxes");
        for (Map.Entry<NodeInfo, CompletableFuture<ContentResponse>> e : pending.entrySet()) {
            String node = e.getKey().id().value();
            ContentResponse answer;
            try {
                answer = e.getValue().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException ex) {
                pending.values().forEach(f -> f.cancel(true));
                metrics.upstreamFailure(e.getKey().id(), 504);
                throw ProxyProblem.of(504, "node " + node + " did not answer the sandboxes' metrics in time");
            } catch (ExecutionException ex) {
                metrics.upstreamFailure(e.getKey().id(), 502);
                throw ProxyProblem.of(502, "node " + node + " is not reachable for the sandboxes' metrics");
            }
            if (answer.getStatus() >= 400 && answer.getStatus() < 500) {
                pending.values().forEach(f -> f.cancel(true));
                return new Answer(answer.getStatus(), answer.getMediaType(), answer.getContent());
            }
            JsonNode body = parse(answer.getContent());
            if (answer.getStatus() != 200 || !body.path("sandboxes").isObject()) {
                metrics.upstreamFailure(e.getKey().id(), 502);
                throw ProxyProblem.of(
                        502,
                        "node " + node + " failed to answer the metrics of sandboxes "
                                + String.join(", ", plan.byNode().get(e.getKey())) + " (status "
                                + answer.getStatus() + ")");
            }
            body.path("sandboxes").properties().forEach(p -> sandboxes.set(p.getKey(), p.getValue()));
        }
        try {
            return new Answer(200, "application/json", JSON.writeValueAsBytes(merged));
        } catch (IOException ex) {
            throw new IllegalStateException("cannot write the merged metrics", ex);
        }
    }

    private CompletableFuture<ContentResponse> send(Request request, NodeInfo node, List<String> ids) {
        String query = "sandbox_ids=" + URLEncoder.encode(String.join(",", ids), StandardCharsets.UTF_8);
        org.eclipse.jetty.client.Request out = http.get()
                .newRequest(node.address().resolve("/sandboxes/metrics?" + query))
                .method(HttpMethod.GET)
                .timeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
        HttpFields headers = request.getHeaders();
        out.headers(h -> {
            for (HttpField field : headers) {
                if (COPIED.contains(field.getLowerCaseName())) {
                    h.add(field);
                }
            }
        });
        return new CompletableResponseListener(out).send();
    }

    private static JsonNode parse(byte[] body) {
        try {
            JsonNode node = JSON.readTree(body);
            return node == null ? JSON.missingNode() : node;
        } catch (IOException e) {
            return JSON.missingNode();
        }
    }

    /** {@code sandbox_ids}, comma-separated or repeated, as a node reads them. */
    static Set<String> ids(Fields query) {
        Set<String> ids = new LinkedHashSet<>();
        List<String> values = query.getValues("sandbox_ids");
        if (values == null) {
            return ids;
        }
        for (String value : values) {
            for (String part : value.split(",", -1)) {
                if (!part.isBlank()) {
                    ids.add(part.strip());
                }
            }
        }
        return ids;
    }
}
