package io.agentenv.server.gateway;

import static java.util.Objects.requireNonNull;

import io.agentenv.cluster.NodeId;
import io.agentenv.cluster.SandboxOwners;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Running sandboxes' owners as the registry last said, kept for a short time so that a stream of traffic to one sandbox
 * reads the database once. Control-plane requests always read it and drop what was kept, since they may change the
 * owner (a connect that resumes a paused sandbox on another node): the traffic after them reads again. Paused
 * sandboxes and lookups of sandboxes that do not exist are not kept. An owner also changes when a sandbox is paused and
 * resumed elsewhere through another gateway, or a node dies; a request that reached the wrong node in that window is
 * answered by it (not found, or a conflict), and {@link #forget} makes the next one look again.
 */
final class OwnerCache {
    private static final int MAX_ENTRIES = 100_000;

    private final SandboxOwners owners;
    private final Clock clock;
    private final Duration ttl;
    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

    private record Entry(SandboxOwners.Ownership ownership, Instant until) {}

    OwnerCache(SandboxOwners owners, Clock clock, Duration ttl) {
        this.owners = requireNonNull(owners, "owners is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.ttl = requireNonNull(ttl, "ttl is null");
    }

    /**
     * The owner of {@code sandboxId}; empty when there is no such sandbox. {@code fresh}: a control-plane request,
     * which may change the owner or the state: the registry is read and nothing is kept (the traffic after it reads
     * again); otherwise traffic, served from a young remembered answer. Throws what the registry throws.
     */
    Optional<SandboxOwners.Ownership> owner(String sandboxId, boolean fresh) {
        Instant now = clock.instant();
        Entry entry = entries.get(sandboxId);
        if (!fresh && entry != null && entry.until().isAfter(now)) {
            return Optional.of(entry.ownership());
        }
        Optional<SandboxOwners.Ownership> found = owners.owner(sandboxId);
        if (!fresh && found.isPresent() && !found.get().paused()) {
            if (entries.size() >= MAX_ENTRIES) {
                entries.clear(); // a bound, not a policy: entries live one ttl anyway
            }
            entries.put(sandboxId, new Entry(found.get(), now.plus(ttl)));
        } else {
            entries.remove(sandboxId);
        }
        return found;
    }

    /**
     * Remembers that {@code node} owns the running sandbox {@code sandboxId}, which a create the gateway placed there
     * just made: the sandbox's first traffic (the SDK's first command) then reads no database.
     */
    void remember(String sandboxId, NodeId node) {
        if (entries.size() >= MAX_ENTRIES) {
            entries.clear();
        }
        entries.put(
                sandboxId,
                new Entry(
                        new SandboxOwners.Ownership(Optional.of(node), false),
                        clock.instant().plus(ttl)));
    }

    void forget(String sandboxId) {
        entries.remove(sandboxId);
    }
}
