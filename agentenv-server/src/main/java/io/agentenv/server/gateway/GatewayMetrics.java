package io.agentenv.server.gateway;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.ClusterCensus;
import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.NodeInfo;
import io.agentenv.cluster.NodeLoad;
import io.agentenv.cluster.NodeState;
import io.agentenv.server.metrics.PrometheusText;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's {@code GET /metrics}: the cluster as its database says at the scrape (one {@link ClusterCensus} read:
 * two queries, however many nodes and sandboxes), as this gateway's own view of the nodes sees it, and this gateway's
 * traffic since it started: requests by route class and status, the time to a node's answer, create placements and
 * retries, and the failures to reach nodes. The text is the node's ({@link PrometheusText}).
 */
final class GatewayMetrics {
    private static final Logger log = LoggerFactory.getLogger(GatewayMetrics.class);

    private final ClusterCensus census;
    private final ClusterView cluster;
    private final PrometheusText.Counters requests = new PrometheusText.Counters("route", "status");
    private final PrometheusText.Histograms forwarding = new PrometheusText.Histograms("route");
    private final PrometheusText.Counters placements = new PrometheusText.Counters("node", "status");
    private final PrometheusText.Counters retries = new PrometheusText.Counters("node", "reason");
    private final PrometheusText.Counters upstreamFailures = new PrometheusText.Counters("node", "status");
    /** Whether the last scrape could not read the census: the warning is logged once per outage, not per scrape. */
    private volatile boolean censusFailing;

    GatewayMetrics(ClusterCensus census, ClusterView cluster) {
        this.census = requireNonNull(census, "census is null");
        this.cluster = requireNonNull(cluster, "cluster is null");
    }

    /** A request the gateway finished: its route class and the status it answered. */
    void request(String route, int status) {
        requests.increment(route, Integer.toString(status));
    }

    /** From a request's arrival to the head of the node's answer (or the gateway's own, for a create). */
    void forwarded(String route, long nanos) {
        forwarding.observe(nanos, route);
    }

    /** A create was placed: {@code node} answered it with {@code status}. */
    void placed(NodeId node, int status) {
        placements.increment(node.value(), Integer.toString(status));
    }

    /** A create passed over {@code node} for the next candidate ({@code refused}, {@code full}, {@code unavailable}). */
    void retried(NodeId node, String reason) {
        retries.increment(node.value(), reason);
    }

    /** The gateway answered 502, 503 or 504 because {@code node} could not serve the request. */
    void upstreamFailure(NodeId node, int status) {
        upstreamFailures.increment(node.value(), Integer.toString(status));
    }

    long upstreamFailures(String node, int status) {
        return upstreamFailures.get(node, Integer.toString(status));
    }

    String render() {
        StringBuilder out = new StringBuilder(8192);
        ClusterCensus.Census now = null;
        try {
            now = census.census();
            censusFailing = false;
        } catch (RuntimeException e) {
            if (!censusFailing) {
                log.atWarn().setCause(e).log("gateway: the cluster's census cannot be read for /metrics");
            }
            censusFailing = true;
        }
        PrometheusText.gauge(
                out,
                "aenv_gateway_database_up",
                "Whether this scrape could read the cluster's database (the cluster families below need it).",
                now == null ? 0 : 1);
        if (now != null) {
            renderCensus(out, now);
        }
        renderView(out);
        requests.render(
                out,
                "aenv_gateway_requests_total",
                "Requests this gateway finished, by route class and the status it answered.");
        forwarding.render(
                out,
                "aenv_gateway_forward_duration_seconds",
                "From a request's arrival to the head of the node's answer, by route class.");
        placements.render(
                out,
                "aenv_gateway_create_placements_total",
                "Creates placed, by the node that answered and its status.");
        retries.render(
                out,
                "aenv_gateway_create_retries_total",
                "Create attempts a node refused (connection refused, 429 full, 503 unavailable), by node and reason.");
        upstreamFailures.render(
                out,
                "aenv_gateway_upstream_failures_total",
                "Requests answered 502, 503 or 504 because their node could not serve them, by node and status.");
        return out.toString();
    }

    private void renderCensus(StringBuilder out, ClusterCensus.Census now) {
        List<NodeInfo> nodes = now.nodes().stream()
                .sorted(Comparator.comparing(n -> n.id().value()))
                .toList();
        Map<NodeState, Long> byState = new TreeMap<>();
        for (NodeState state : NodeState.values()) {
            byState.put(state, 0L);
        }
        nodes.forEach(n -> byState.merge(n.state(), 1L, Long::sum));
        PrometheusText.family(out, "aenv_cluster_nodes", "gauge", "Nodes by their state in the cluster's database.");
        byState.forEach((state, count) -> PrometheusText.sample(
                out, "aenv_cluster_nodes", PrometheusText.labels("state", lower(state.name())), count));

        PrometheusText.family(
                out,
                "aenv_cluster_node_status",
                "gauge",
                "Each node's status as GET /nodes gives it (ready, draining, unhealthy: lease ran out, dead); always 1.");
        for (NodeInfo n : nodes) {
            PrometheusText.sample(
                    out,
                    "aenv_cluster_node_status",
                    PrometheusText.labels("node", n.id().value(), "status", cluster.status(n)),
                    1);
        }
        List<NodeInfo> live =
                nodes.stream().filter(n -> n.state() != NodeState.DEAD).toList();
        perNode(out, live, "aenv_cluster_node_epoch", "The epoch of each live node's registration.", n -> n.epoch());
        perNode(
                out,
                live,
                "aenv_cluster_node_lease_expiry_timestamp_seconds",
                "When each live node's lease runs out unless renewed (Unix time, the database's clock).",
                n -> n.leaseUntil().toEpochMilli() / 1000.0);
        perNode(
                out,
                live,
                "aenv_cluster_node_slots_total",
                "Sandboxes each live node holds at most, as it last reported.",
                n -> n.load().slotsMax());
        perNode(
                out,
                live,
                "aenv_cluster_node_slots_free",
                "Sandbox slots each live node had free, as it last reported.",
                n -> Math.max(0, n.load().slotsMax() - n.load().slotsUsed()));
        perNode(
                out,
                live,
                "aenv_cluster_node_cpus",
                "CPUs of each live node's host.",
                n -> n.load().cpuCount());
        perNode(
                out,
                live,
                "aenv_cluster_node_load1",
                "The one-minute load average each live node last reported.",
                n -> n.load().cpuLoad());
        perNode(
                out,
                live,
                "aenv_cluster_node_memory_total_bytes",
                "Memory of each live node's host.",
                n -> n.load().memoryTotalMib() << 20);
        perNode(
                out,
                live,
                "aenv_cluster_node_memory_available_bytes",
                "Memory each live node's host could still give (MemAvailable), as it last reported.",
                n -> n.load().memoryAvailableMib() << 20);

        PrometheusText.family(
                out,
                "aenv_cluster_node_pool_ready",
                "gauge",
                "Warm sandboxes ready per template on each live node, as it last reported.");
        for (NodeInfo n : live) {
            NodeLoad load = n.load();
            new TreeMap<>(load.poolStock())
                    .forEach((template, ready) -> PrometheusText.sample(
                            out,
                            "aenv_cluster_node_pool_ready",
                            PrometheusText.labels("node", n.id().value(), "template", template),
                            ready));
        }

        PrometheusText.family(
                out,
                "aenv_cluster_node_sandboxes",
                "gauge",
                "Sandboxes each node owns by state, from the cluster's database (running and paused always shown).");
        for (NodeInfo n : nodes) {
            Map<String, Long> counts = new TreeMap<>();
            if (n.state() != NodeState.DEAD) {
                counts.put("running", 0L);
                counts.put("paused", 0L);
            }
            now.sandboxes().getOrDefault(n.id(), Map.of()).forEach((state, c) -> counts.put(lower(state), c));
            counts.forEach((state, c) -> PrometheusText.sample(
                    out,
                    "aenv_cluster_node_sandboxes",
                    PrometheusText.labels("node", n.id().value(), "state", state),
                    c));
        }
        PrometheusText.gauge(
                out,
                "aenv_cluster_sandboxes_unowned",
                "Paused sandboxes a dead node released, which the next resume places on a node.",
                now.unowned());
        PrometheusText.gauge(
                out,
                "aenv_cluster_sandboxes_lost",
                "Sandboxes lost with a node declared dead (the cluster's records of them).",
                now.lost());
    }

    private void renderView(StringBuilder out) {
        List<NodeInfo> known = cluster.nodes();
        PrometheusText.family(
                out,
                "aenv_gateway_nodes",
                "gauge",
                "Nodes as this gateway's view routes by (re-read every half second): known, serving, accepting.");
        PrometheusText.sample(
                out,
                "aenv_gateway_nodes",
                PrometheusText.labels("view", "accepting"),
                cluster.accepting().size());
        PrometheusText.sample(out, "aenv_gateway_nodes", PrometheusText.labels("view", "known"), known.size());
        PrometheusText.sample(
                out,
                "aenv_gateway_nodes",
                PrometheusText.labels("view", "serving"),
                known.stream().filter(cluster::serving).count());
    }

    private static void perNode(
            StringBuilder out,
            List<NodeInfo> nodes,
            String name,
            String help,
            java.util.function.Function<NodeInfo, Number> value) {
        PrometheusText.family(out, name, "gauge", help);
        for (NodeInfo n : nodes) {
            PrometheusText.sample(out, name, PrometheusText.labels("node", n.id().value()), value.apply(n));
        }
    }

    private static String lower(String name) {
        return name.toLowerCase(Locale.ROOT);
    }
}
