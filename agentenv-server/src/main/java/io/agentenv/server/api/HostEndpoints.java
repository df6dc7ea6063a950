package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import io.agentenv.api.model.HostInfo;
import io.agentenv.api.model.SandboxState;
import io.agentenv.orchestrator.Orchestrator;
import io.agentenv.spi.BackendCapacity;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * {@code GET /host}: this server's own overview of its host for operators and the web console (version, sandbox
 * counts, the backend's slots and warm pool, the machine's CPU and memory). Authenticated like every API route.
 */
final class HostEndpoints {
    /** The version the server's jar manifest names; {@code dev} when it runs from classes (tests). */
    static final String VERSION = versionOf(HostEndpoints.class);

    private static final Path MEMINFO = Path.of("/proc/meminfo");

    private final Orchestrator orchestrator;
    private final PrometheusMetrics metrics;
    private final String backend;
    private final Clock clock;
    private final Instant startedAt;

    HostEndpoints(Orchestrator orchestrator, PrometheusMetrics metrics, String backend, Clock clock) {
        this.orchestrator = requireNonNull(orchestrator, "orchestrator is null");
        this.metrics = requireNonNull(metrics, "metrics is null");
        this.backend = requireNonNull(backend, "backend is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.startedAt = clock.instant();
    }

    void register(Router router) {
        router.add("GET", "/host", ex -> new Reply.Json(200, host()));
    }

    HostInfo host() {
        long running = 0;
        long paused = 0;
        for (Map.Entry<io.agentenv.orchestrator.SandboxState, Long> e :
                metrics.countByState().entrySet()) {
            if (WireMapping.project(e.getKey()) == SandboxState.PAUSED) {
                paused += e.getValue();
            } else {
                running += e.getValue();
            }
        }
        HostInfo.Slots slots = null;
        List<HostInfo.PoolStock> pool = List.of();
        BackendCapacity capacity = orchestrator.capacity().orElse(null);
        if (capacity != null) {
            slots = new HostInfo.Slots(
                    capacity.slotsUsed(),
                    capacity.slotsTotal().isPresent() ? capacity.slotsTotal().getAsInt() : null);
            pool = capacity.warmPool().stream()
                    .map(s -> new HostInfo.PoolStock(s.template().value(), s.ready(), s.target()))
                    .toList();
        }
        Instant now = clock.instant();
        return new HostInfo(
                VERSION,
                backend,
                startedAt.toString(),
                Math.max(0, Duration.between(startedAt, now).toSeconds()),
                new HostInfo.Sandboxes(running, paused),
                slots,
                pool,
                machine());
    }

    private static HostInfo.Machine machine() {
        var os = ManagementFactory.getOperatingSystemMXBean();
        double load = os.getSystemLoadAverage();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            double cpu = sun.getCpuLoad();
            return new HostInfo.Machine(
                    os.getAvailableProcessors(),
                    cpu < 0 ? null : cpu,
                    load < 0 ? null : load,
                    sun.getTotalMemorySize(),
                    memAvailable().orElse(sun.getFreeMemorySize()));
        }
        return new HostInfo.Machine(os.getAvailableProcessors(), null, load < 0 ? null : load, 0, 0);
    }

    /** Linux's estimate of memory available without swapping (free plus reclaimable cache), in bytes. */
    private static OptionalLong memAvailable() {
        try {
            for (String line : Files.readAllLines(MEMINFO)) {
                if (line.startsWith("MemAvailable:")) {
                    String[] parts =
                            line.substring("MemAvailable:".length()).trim().split("\\s+");
                    return OptionalLong.of(Long.parseLong(parts[0]) * 1024);
                }
            }
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
        return OptionalLong.empty();
    }

    private static String versionOf(Class<?> type) {
        String version = type.getPackage().getImplementationVersion();
        return version == null ? "dev" : version;
    }
}
