package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import io.agentenv.orchestrator.LifecycleEvent;
import io.agentenv.orchestrator.LifecycleListener;
import io.agentenv.orchestrator.Orchestrator;
import io.agentenv.orchestrator.Page;
import io.agentenv.orchestrator.SandboxQuery;
import io.agentenv.orchestrator.SandboxState;
import io.agentenv.orchestrator.SandboxView;
import io.agentenv.orchestrator.SortOrder;
import io.agentenv.volumes.VolumeException;
import io.agentenv.volumes.VolumeRecord;
import io.agentenv.volumes.Volumes;
import io.agentenv.volumes.storage.VolumeStorage;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code GET /metrics} in the Prometheus text format (0.0.4): HTTP requests by method, route pattern and status;
 * sandboxes by lifecycle state plus running/paused/transitioning gauges (read from the orchestrator at scrape time);
 * lifecycle events by kind (from the orchestrator's events); and latency histograms of the lifecycle operations
 * (create, kill, pause, resume, fork, snapshot, ...) as the API served them, by operation and outcome.
 */
final class PrometheusMetrics implements LifecycleListener {
    /** Upper bounds in seconds: sub-millisecond mock calls up to minute-long restores. */
    static final double[] BUCKETS = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};

    private record RequestKey(String method, String route, int status) {}

    private record OperationKey(String operation, String outcome) {}

    /** Lifecycle operations by route: the routes not listed here are not operations. */
    private static final Map<String, String> OPERATIONS = Map.ofEntries(
            Map.entry("POST /sandboxes", "create"),
            Map.entry("POST /v2/sandboxes", "create"),
            Map.entry("DELETE /sandboxes/{id}", "kill"),
            Map.entry("POST /sandboxes/{id}/pause", "pause"),
            Map.entry("POST /sandboxes/{id}/resume", "resume"),
            Map.entry("POST /sandboxes/{id}/connect", "connect"),
            Map.entry("POST /v2/sandboxes/{id}/connect", "connect"),
            Map.entry("POST /sandboxes/{id}/fork", "fork"),
            Map.entry("POST /sandboxes/{id}/snapshots", "snapshot"),
            Map.entry("PUT /sandboxes/{id}/network", "network_update"));

    private final ConcurrentHashMap<RequestKey, LongAdder> requests = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<OperationKey, Histogram> operations = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> events = new ConcurrentHashMap<>();
    private final Orchestrator orchestrator;
    private final Volumes volumes;

    PrometheusMetrics(Orchestrator orchestrator, Volumes volumes) {
        this.orchestrator = requireNonNull(orchestrator, "orchestrator is null");
        this.volumes = requireNonNull(volumes, "volumes is null");
    }

    /** {@code route} is the matched pattern (never the raw path, so ids do not explode the label set). */
    void recordRequest(String method, String route, int status, long nanos) {
        requests.computeIfAbsent(new RequestKey(method, route, status), k -> new LongAdder())
                .increment();
        String operation = OPERATIONS.get(method + " " + route);
        if (operation != null) {
            String outcome = status < 400 ? "ok" : status < 500 ? "client_error" : "server_error";
            operations
                    .computeIfAbsent(new OperationKey(operation, outcome), k -> new Histogram())
                    .observe(nanos);
        }
    }

    @Override
    public void onEvent(LifecycleEvent event) {
        String kind = switch (event) {
            case LifecycleEvent.Created e -> "created";
            case LifecycleEvent.Resumed e -> "resumed";
            case LifecycleEvent.Paused e -> "paused";
            case LifecycleEvent.Killed e -> "killed";
            case LifecycleEvent.Forked e -> "forked";
            case LifecycleEvent.SnapshotTaken e -> "snapshot_taken";
            case LifecycleEvent.TimedOut e -> "timed_out";
        };
        events.computeIfAbsent(kind, k -> new LongAdder()).increment();
    }

    String render() {
        StringBuilder out = new StringBuilder(4096);
        Map<SandboxState, Long> byState = countByState();
        out.append("# HELP aenv_sandboxes Sandboxes by lifecycle state.\n");
        out.append("# TYPE aenv_sandboxes gauge\n");
        for (Map.Entry<SandboxState, Long> e : byState.entrySet()) {
            out.append("aenv_sandboxes{state=\"")
                    .append(e.getKey().name().toLowerCase(Locale.ROOT))
                    .append("\"} ")
                    .append(e.getValue())
                    .append('\n');
        }
        long transitioning = byState.entrySet().stream()
                .filter(e -> e.getKey().isTransitional())
                .mapToLong(Map.Entry::getValue)
                .sum();
        gauge(out, "aenv_sandboxes_running", "Sandboxes running.", byState.getOrDefault(SandboxState.RUNNING, 0L));
        gauge(out, "aenv_sandboxes_paused", "Sandboxes paused.", byState.getOrDefault(SandboxState.PAUSED, 0L));
        gauge(
                out,
                "aenv_sandboxes_transitioning",
                "Sandboxes in a transition (creating, pausing, resuming, forking, snapshotting).",
                transitioning);

        renderVolumes(out);
        out.append("# HELP aenv_http_requests_total HTTP requests handled, by method, route and status.\n");
        out.append("# TYPE aenv_http_requests_total counter\n");
        Map<String, Long> lines = new TreeMap<>();
        requests.forEach((k, v) -> lines.put(
                "aenv_http_requests_total{method=\"" + k.method() + "\",route=\"" + escape(k.route()) + "\",status=\""
                        + k.status() + "\"} ",
                v.sum()));
        lines.forEach((line, value) -> out.append(line).append(value).append('\n'));

        out.append("# HELP aenv_lifecycle_events_total Lifecycle events published by the orchestrator, by kind.\n");
        out.append("# TYPE aenv_lifecycle_events_total counter\n");
        new TreeMap<>(events)
                .forEach((kind, n) -> out.append("aenv_lifecycle_events_total{event=\"")
                        .append(kind)
                        .append("\"} ")
                        .append(n.sum())
                        .append('\n'));

        out.append("# HELP aenv_operation_duration_seconds Latency of lifecycle operations as the API served them.\n");
        out.append("# TYPE aenv_operation_duration_seconds histogram\n");
        operationsByLabel().forEach((labels, h) -> h.render(out, "aenv_operation_duration_seconds", labels));
        return out.toString();
    }

    private Map<String, Histogram> operationsByLabel() {
        Map<String, Histogram> out = new TreeMap<>();
        operations.forEach((k, h) -> out.put("operation=\"" + k.operation() + "\",outcome=\"" + k.outcome() + "\"", h));
        return out;
    }

    /**
     * Each volume's bytes used and size, read from its file system at scrape time (one {@code statfs} per volume); a
     * volume whose storage cannot answer (not mounted, a host without volumes) is left out.
     */
    private void renderVolumes(StringBuilder out) {
        StringBuilder used = new StringBuilder();
        StringBuilder size = new StringBuilder();
        for (VolumeRecord volume : volumes.list()) {
            VolumeStorage.Usage usage;
            try {
                usage = volumes.usage(volume.id());
            } catch (VolumeException e) {
                continue;
            }
            String labels = "{volume_id=\"" + volume.id() + "\",name=\"" + volume.name() + "\"} ";
            used.append("aenv_volume_used_bytes")
                    .append(labels)
                    .append(usage.usedBytes())
                    .append('\n');
            size.append("aenv_volume_size_bytes")
                    .append(labels)
                    .append(usage.totalBytes())
                    .append('\n');
        }
        out.append("# HELP aenv_volume_used_bytes Bytes used on a volume.\n");
        out.append("# TYPE aenv_volume_used_bytes gauge\n").append(used);
        out.append("# HELP aenv_volume_size_bytes A volume's capacity in bytes.\n");
        out.append("# TYPE aenv_volume_size_bytes gauge\n").append(size);
    }

    private static void gauge(StringBuilder out, String name, String help, long value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" gauge\n");
        out.append(name).append(' ').append(value).append('\n');
    }

    /** Visible sandboxes by internal state (zero for states none is in), read from the store. */
    Map<SandboxState, Long> countByState() {
        Map<SandboxState, Long> counts = new EnumMap<>(SandboxState.class);
        for (SandboxState s : SandboxState.visible()) {
            counts.put(s, 0L);
        }
        SandboxQuery query = SandboxQuery.all(1000);
        while (true) {
            Page<SandboxView> page = orchestrator.list(query);
            for (SandboxView view : page.items()) {
                counts.merge(view.state(), 1L, Long::sum);
            }
            if (page.next().isEmpty()) {
                return counts;
            }
            query = new SandboxQuery(
                    query.states(), Map.of(), Optional.empty(), Optional.empty(), SortOrder.DESC, 1000, page.next());
        }
    }

    private static String escape(String label) {
        return label.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    /** A cumulative histogram with the fixed {@link #BUCKETS}; lock-free. */
    static final class Histogram {
        private final LongAdder[] counts = new LongAdder[BUCKETS.length];
        private final LongAdder total = new LongAdder();
        private final LongAdder sumNanos = new LongAdder();

        Histogram() {
            for (int i = 0; i < counts.length; i++) {
                counts[i] = new LongAdder();
            }
        }

        void observe(long nanos) {
            double seconds = nanos / 1e9;
            for (int i = 0; i < BUCKETS.length; i++) {
                if (seconds <= BUCKETS[i]) {
                    counts[i].increment();
                    break;
                }
            }
            total.increment();
            sumNanos.add(nanos);
        }

        void render(StringBuilder out, String name, String labels) {
            long cumulative = 0;
            for (int i = 0; i < BUCKETS.length; i++) {
                cumulative += counts[i].sum();
                out.append(name)
                        .append("_bucket{")
                        .append(labels)
                        .append(",le=\"")
                        .append(BUCKETS[i])
                        .append("\"} ")
                        .append(cumulative)
                        .append('\n');
            }
            long n = total.sum();
            out.append(name)
                    .append("_bucket{")
                    .append(labels)
                    .append(",le=\"+Inf\"} ")
                    .append(n)
                    .append('\n');
            out.append(name)
                    .append("_sum{")
                    .append(labels)
                    .append("} ")
                    .append(sumNanos.sum() / 1e9)
                    .append('\n');
            out.append(name)
                    .append("_count{")
                    .append(labels)
                    .append("} ")
                    .append(n)
                    .append('\n');
        }
    }
}
