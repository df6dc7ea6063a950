package io.agentenv.envd.process;

import static java.util.Objects.requireNonNull;

import io.agentenv.envd.protocol.process.ProcessSelector;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Processes by pid. Exited ones stay for {@code retention} so Connect can still report their end; they are queued in
 * the order they ended, so eviction looks only at the oldest ones instead of scanning every retained process on each
 * call (thousands of them when commands run back to back for the default five minutes).
 */
final class ProcessTable implements AutoCloseable {
    private final Clock clock;
    private final Duration retention;
    private final Map<Long, ChildProcess> byPid = new ConcurrentHashMap<>();
    private final Queue<ChildProcess> exited = new ConcurrentLinkedQueue<>();

    ProcessTable(Clock clock, Duration retention) {
        this.clock = requireNonNull(clock, "clock is null");
        this.retention = requireNonNull(retention, "retention is null");
    }

    void add(ChildProcess child) {
        evictExpired(clock.instant());
        byPid.put(child.pid(), child); // a reused pid replaces the retained, exited entry
        child.whenEnded(exited::add);
    }

    Optional<ChildProcess> find(ProcessSelector selector) {
        evictExpired(clock.instant());
        return switch (selector.getSelectorCase()) {
            case PID -> Optional.ofNullable(byPid.get(Integer.toUnsignedLong(selector.getPid())));
            case TAG ->
                byPid.values().stream()
                        .filter(c -> c.tag().filter(selector.getTag()::equals).isPresent())
                        .min(Comparator.comparing((ChildProcess c) -> !c.isRunning())
                                .thenComparingLong(ChildProcess::pid));
            case SELECTOR_NOT_SET -> Optional.empty();
        };
    }

    List<ChildProcess> running() {
        evictExpired(clock.instant());
        return byPid.values().stream()
                .filter(ChildProcess::isRunning)
                .sorted(Comparator.comparingLong(ChildProcess::pid))
                .toList();
    }

    void evictExpired(Instant now) {
        Instant cutoff = now.minus(retention);
        for (ChildProcess oldest = exited.peek();
                oldest != null && !oldest.exitedAt().orElseThrow().isAfter(cutoff);
                oldest = exited.peek()) {
            if (exited.remove(oldest)) {
                byPid.remove(oldest.pid(), oldest); // not a newer process that reused the pid
            }
        }
    }

    /** The pids of every process known now: running, or exited and still retained. */
    Set<Long> pids() {
        return Set.copyOf(byPid.keySet());
    }

    /**
     * Forgets an exited process at once instead of keeping it for the retention (Connect then reports it unknown);
     * a process still running is kept.
     *
     * @return whether it was forgotten
     */
    boolean forgetExited(long pid) {
        ChildProcess child = byPid.get(pid);
        if (child == null || child.isRunning()) {
            return false;
        }
        exited.remove(child);
        return byPid.remove(pid, child);
    }

    /**
     * Kills every known process group, including those whose leader already exited but may have left background
     * children (retained entries only, so the group id is recent): nothing outlives envd.
     */
    @Override
    public void close() {
        for (ChildProcess child : byPid.values()) {
            child.killGroup();
        }
    }
}
