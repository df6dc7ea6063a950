package io.agentenv.server.cluster;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.NodeLoad;
import io.agentenv.orchestrator.Orchestrator;
import io.agentenv.orchestrator.TemplateView;
import io.agentenv.spi.BackendCapacity;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * What this node reports with each lease renewal: the host's CPUs, memory ({@code /proc/meminfo}) and load
 * ({@code /proc/loadavg}), the backend's slots and warm pool stock, and the templates it can start without fetching
 * anything: the backend's built-in templates (ids and aliases) and the snapshots whose files are in this node's
 * artifact directory (re-read at most every {@code templatesEvery}); and whether its volumes are the cluster's shared
 * ones.
 */
public final class NodeLoadProbe implements Supplier<NodeLoad> {
    private final Orchestrator orchestrator;
    private final Path snapshotsDir;
    private final Path proc;
    private final Clock clock;
    private final Duration templatesEvery;
    private final boolean sharedVolumes;
    private Set<String> templates = Set.of();
    private Instant templatesRead = Instant.MIN;

    /**
     * @param artifactRoot the orchestrator's artifact root (snapshots are under {@code snapshots/<id>})
     * @param proc {@code /proc}, or a stand-in for tests
     * @param sharedVolumes whether this node keeps volumes in the cluster's shared volume directory
     */
    public NodeLoadProbe(
            Orchestrator orchestrator,
            Path artifactRoot,
            Path proc,
            Clock clock,
            Duration templatesEvery,
            boolean sharedVolumes) {
        this.orchestrator = requireNonNull(orchestrator, "orchestrator is null");
        this.snapshotsDir = requireNonNull(artifactRoot, "artifactRoot is null").resolve("snapshots");
        this.proc = requireNonNull(proc, "proc is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.templatesEvery = requireNonNull(templatesEvery, "templatesEvery is null");
        this.sharedVolumes = sharedVolumes;
    }

    @Override
    public synchronized NodeLoad get() {
        Map<String, Long> memory = meminfoMib();
        Optional<BackendCapacity> capacity = orchestrator.capacity();
        Map<String, Integer> pool = new HashMap<>();
        capacity.ifPresent(
                c -> c.warmPool().forEach(s -> pool.merge(s.template().value(), s.ready(), Integer::sum)));
        return new NodeLoad(
                Runtime.getRuntime().availableProcessors(),
                memory.getOrDefault("MemTotal", 0L),
                memory.getOrDefault("MemAvailable", 0L),
                loadAverage(),
                capacity.map(BackendCapacity::slotsUsed).orElse(0),
                capacity.flatMap(c -> c.slotsTotal().isPresent()
                                ? Optional.of(c.slotsTotal().getAsInt())
                                : Optional.empty())
                        .orElse(0),
                pool,
                localTemplates(),
                sharedVolumes);
    }

    private Set<String> localTemplates() {
        Instant now = clock.instant();
        if (now.isBefore(templatesRead.plus(templatesEvery))) {
            return templates;
        }
        Set<String> found = new HashSet<>();
        List<TemplateView> builtIn =
                orchestrator.listTemplates(1000, Optional.empty()).items();
        for (TemplateView template : builtIn) {
            found.add(template.id().value());
            found.addAll(template.aliases());
        }
        if (Files.isDirectory(snapshotsDir)) {
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(snapshotsDir)) {
                for (Path entry : entries) {
                    found.add(entry.getFileName().toString());
                }
            } catch (IOException e) {
                // what was found so far is reported; the next read tries again
            }
        }
        templates = Set.copyOf(found);
        templatesRead = now;
        return templates;
    }

    private Map<String, Long> meminfoMib() {
        Map<String, Long> values = new HashMap<>();
        try {
            for (String line : Files.readAllLines(proc.resolve("meminfo"))) {
                String[] parts = line.split("\\s+");
                if (parts.length >= 2 && parts[0].endsWith(":")) {
                    values.put(parts[0].substring(0, parts[0].length() - 1), Long.parseLong(parts[1]) / 1024);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // reported as unknown (0)
        }
        return values;
    }

    private double loadAverage() {
        try {
            return Double.parseDouble(
                    Files.readString(proc.resolve("loadavg")).trim().split("\\s+")[0]);
        } catch (IOException | NumberFormatException | ArrayIndexOutOfBoundsException e) {
            return 0;
        }
    }
}
