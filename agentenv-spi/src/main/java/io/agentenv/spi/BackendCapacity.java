package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.OptionalInt;

/**
 * What a backend holds right now, for an operator's overview of the host: how many of its sandbox slots are taken and
 * how many ready sandboxes its warm pool keeps per template. A reading, not a reservation: it may be stale the moment
 * it is returned.
 *
 * @param slotsUsed  slots held by sandboxes and by warm pool members
 * @param slotsTotal how many slots there are, or empty when the backend has no fixed limit
 * @param warmPool   the warm pool's stock per template it keeps warm (empty when it keeps none)
 */
public record BackendCapacity(int slotsUsed, OptionalInt slotsTotal, List<PoolStock> warmPool) {
    public BackendCapacity {
        if (slotsUsed < 0) {
            throw new IllegalArgumentException("slotsUsed must be >= 0: " + slotsUsed);
        }
        requireNonNull(slotsTotal, "slotsTotal is null");
        warmPool = List.copyOf(warmPool);
    }

    /**
     * The warm pool of one template.
     *
     * @param ready  members ready to be claimed now
     * @param target how many the pool refills to
     */
    public record PoolStock(TemplateId template, int ready, int target) {
        public PoolStock {
            requireNonNull(template, "template is null");
            if (ready < 0 || target < 0) {
                throw new IllegalArgumentException("ready and target must be >= 0");
            }
        }
    }
}
