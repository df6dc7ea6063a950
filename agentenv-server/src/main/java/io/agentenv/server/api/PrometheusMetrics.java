package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import io.agentenv.server.orchestrator.Orchestrator;
import io.agentenv.server.orchestrator.Page;
import io.agentenv.server.orchestrator.SandboxQuery;
import io.agentenv.server.orchestrator.SandboxState;
import io.agentenv.server.orchestrator.SandboxView;
import io.agentenv.server.orchestrator.SortOrder;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code GET /metrics} in the Prometheus text format: HTTP requests by method, route pattern and status, and
 * sandboxes by lifecycle state (read from the orchestrator at scrape time).
 */
final class PrometheusMetrics {
    private record RequestKey(String method, String route, int status) {}

    private final ConcurrentHashMap<RequestKey, LongAdder> requests = new ConcurrentHashMap<>();
    private final Orchestrator orchestrator;

    PrometheusMetrics(Orchestrator orchestrator) {
        this.orchestrator = requireNonNull(orchestrator, "orchestrator is null");
    }

    /** {@code route} is the matched pattern (never the raw path, so ids do not explode the label set). */
    void recordRequest(String method, String route, int status) {
        requests.computeIfAbsent(new RequestKey(method, route, status), k -> new LongAdder()).increment();
    }

    String render() {
        StringBuilder out = new StringBuilder(1024);
        out.append("# HELP aenv_sandboxes Sandboxes by lifecycle state.\n");
        out.append("# TYPE aenv_sandboxes gauge\n");
        for (Map.Entry<SandboxState, Long> e : countByState().entrySet()) {
            out.append("aenv_sandboxes{state=\"").append(e.getKey().name().toLowerCase(Locale.ROOT)).append("\"} ")
                    .append(e.getValue()).append('\n');
        }
        out.append("# HELP aenv_http_requests_total HTTP requests handled, by method, route and status.\n");
        out.append("# TYPE aenv_http_requests_total counter\n");
        Map<String, Long> lines = new TreeMap<>();
        requests.forEach((k, v) -> lines.put("aenv_http_requests_total{method=\"" + k.method() + "\",route=\""
                + escape(k.route()) + "\",status=\"" + k.status() + "\"} ", v.sum()));
        lines.forEach((line, value) -> out.append(line).append(value).append('\n'));
        return out.toString();
    }

    private Map<SandboxState, Long> countByState() {
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
            query = new SandboxQuery(query.states(), Map.of(), Optional.empty(), Optional.empty(), SortOrder.DESC,
                    1000, page.next());
        }
    }

    private static String escape(String label) {
        return label.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
