package io.agentenv.envd.metrics;

import static java.util.Objects.requireNonNull;

import java.util.Optional;

/**
 * Memory of a cgroup as its controller reports it, the same for v1 and v2.
 *
 * @param limit the cgroup's limit in bytes; empty when unlimited
 * @param usage bytes charged to the cgroup, page cache included
 * @param cache the page cache part of {@code usage}
 */
record CgroupMemory(Optional<Long> limit, long usage, long cache) {
    CgroupMemory {
        requireNonNull(limit, "limit is null");
        if (limit.isPresent() && limit.get() < 0) {
            throw new IllegalArgumentException("limit must be >= 0, got " + limit.get());
        }
        if (usage < 0 || cache < 0) {
            throw new IllegalArgumentException("usage and cache must be >= 0, got " + usage + " and " + cache);
        }
    }
}
