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
import io.agentenv.server.metrics.MetricsSource;
import io.agentenv.server.metrics.PrometheusText;
import io.agentenv.volumes.VolumeException;
import io.agentenv.volumes.VolumeRecord;
import io.agentenv.volumes.Volumes;
import io.agentenv.volumes.storage.VolumeStorage;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code GET /metrics} in the Prometheus text format (0.0.4): HTTP requests by method, route pattern and status;
 * sandboxes by lifecycle state plus running/paused/transitioning gauges (read from the orchestrator at scrape time);
 * lifecycle events by kind (from the orchestrator's events); and latency histograms of the lifecycle operations
 * (create, kill, pause, resume, fork, snapshot, ...) as the API served them, by operation and outcome; then what
 * {@code extra} adds (a node of a cluster: its identity and lease). The text is {@link PrometheusText}'s, which the
 * gateway's metrics share.
 */
final class PrometheusMetrics implements LifecycleListener {
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

    private final PrometheusText.Counters requests = new PrometheusText.Counters("method", "route", "status");
    private final PrometheusText.Histograms operations = new PrometheusText.Histograms("operation", "outcome");
    private final PrometheusText.Counters events = new PrometheusText.Counters("event");
    private final Orchestrator orchestrator;
    private final Volumes volumes;
    private final MetricsSource extra;

    PrometheusMetrics(Orchestrator orchestrator, Volumes volumes) {
        this(orchestrator, volumes, MetricsSource.NONE);
    }

    PrometheusMetrics(Orchestrator orchestrator, Volumes volumes, MetricsSource extra) {
        this.orchestrator = requireNonNull(orchestrator, "orchestrator is null");
        this.volumes = requireNonNull(volumes, "volumes is null");
        this.extra = requireNonNull(extra, "extra is null");
    }

    /** {@code route} is the matched pattern (never the raw path, so ids do not explode the label set). */
    void recordRequest(String method, String route, int status, long nanos) {
        requests.increment(method, route, Integer.toString(status));
        String operation = OPERATIONS.get(method + " " + route);
        if (operation != null) {
            String outcome = status < 400 ? "ok" : status < 500 ? "client_error" : "server_error";
            operations.observe(nanos, operation, outcome);
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
        events.increment(kind);
    }

    String render() {
        StringBuilder out = new StringBuilder(4096);
        Map<SandboxState, Long> byState = countByState();
        PrometheusText.family(out, "aenv_sandboxes", "gauge", "Sandboxes by lifecycle state.");
        for (Map.Entry<SandboxState, Long> e : byState.entrySet()) {
            PrometheusText.sample(
                    out,
                    "aenv_sandboxes",
                    PrometheusText.labels("state", e.getKey().name().toLowerCase(Locale.ROOT)),
                    e.getValue());
        }
        long transitioning = byState.entrySet().stream()
                .filter(e -> e.getKey().isTransitional())
                .mapToLong(Map.Entry::getValue)
                .sum();
        PrometheusText.gauge(
                out, "aenv_sandboxes_running", "Sandboxes running.", byState.getOrDefault(SandboxState.RUNNING, 0L));
        PrometheusText.gauge(
                out, "aenv_sandboxes_paused", "Sandboxes paused.", byState.getOrDefault(SandboxState.PAUSED, 0L));
        PrometheusText.gauge(
                out,
                "aenv_sandboxes_transitioning",
                "Sandboxes in a transition (creating, pausing, resuming, forking, snapshotting).",
                transitioning);

        renderVolumes(out);
        requests.render(out, "aenv_http_requests_total", "HTTP requests handled, by method, route and status.");
        events.render(out, "aenv_lifecycle_events_total", "Lifecycle events published by the orchestrator, by kind.");
        operations.render(
                out, "aenv_operation_duration_seconds", "Latency of lifecycle operations as the API served them.");
        extra.render(out);
        return out.toString();
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
            String labels = PrometheusText.labels("volume_id", volume.id(), "name", volume.name());
            PrometheusText.sample(used, "aenv_volume_used_bytes", labels, usage.usedBytes());
            PrometheusText.sample(size, "aenv_volume_size_bytes", labels, usage.totalBytes());
        }
        PrometheusText.family(out, "aenv_volume_used_bytes", "gauge", "Bytes used on a volume.");
        out.append(used);
        PrometheusText.family(out, "aenv_volume_size_bytes", "gauge", "A volume's capacity in bytes.");
        out.append(size);
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
}
