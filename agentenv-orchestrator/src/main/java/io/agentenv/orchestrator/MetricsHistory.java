package io.agentenv.orchestrator;

import io.agentenv.spi.EnvdMetrics;
import io.agentenv.spi.SandboxId;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** The last {@code limit} metrics samples of every sandbox, in memory. Safe for concurrent use; no I/O. */
final class MetricsHistory {
    private final int limit;
    private final Map<SandboxId, Ring> samples = new ConcurrentHashMap<>();

    MetricsHistory(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be >= 1: " + limit);
        }
        this.limit = limit;
    }

    void add(SandboxId id, EnvdMetrics sample) {
        samples.computeIfAbsent(id, key -> new Ring()).add(sample, limit);
    }

    /** Samples with {@code from <= timestamp <= to}, oldest first. */
    List<EnvdMetrics> range(SandboxId id, Instant from, Instant to) {
        return copy(id).stream()
                .filter(m -> !m.timestamp().isBefore(from) && !m.timestamp().isAfter(to))
                .sorted(Comparator.comparing(EnvdMetrics::timestamp))
                .toList();
    }

    Optional<EnvdMetrics> latest(SandboxId id) {
        return copy(id).stream().max(Comparator.comparing(EnvdMetrics::timestamp));
    }

    int size(SandboxId id) {
        return copy(id).size();
    }

    Set<SandboxId> sandboxes() {
        return Set.copyOf(samples.keySet());
    }

    void remove(SandboxId id) {
        samples.remove(id);
    }

    private List<EnvdMetrics> copy(SandboxId id) {
        Ring ring = samples.get(id);
        return ring == null ? List.of() : ring.copy();
    }

    private static final class Ring {
        private final ArrayDeque<EnvdMetrics> items = new ArrayDeque<>();

        synchronized void add(EnvdMetrics sample, int limit) {
            items.addLast(sample);
            while (items.size() > limit) {
                items.removeFirst();
            }
        }

        synchronized List<EnvdMetrics> copy() {
            return List.copyOf(items);
        }
    }
}
