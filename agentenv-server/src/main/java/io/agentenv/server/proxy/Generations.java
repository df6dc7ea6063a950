package io.agentenv.server.proxy;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.SandboxId;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A counter per sandbox that moves on every lifecycle change (created, paused, resumed, killed). Upstream requests are
 * tagged with it, and Jetty's client keeps one connection pool per tag, so a connection opened to one runtime
 * generation of a sandbox is never reused for the next.
 */
final class Generations {
    /** The pool key of one sandbox generation. */
    record Tag(SandboxId sandbox, long generation) {
        Tag {
            requireNonNull(sandbox, "sandbox is null");
        }
    }

    private final ConcurrentHashMap<SandboxId, Long> current = new ConcurrentHashMap<>();

    Tag current(SandboxId id) {
        return new Tag(id, current.getOrDefault(id, 0L));
    }

    /** Moves {@code id} to a new generation. */
    void advance(SandboxId id) {
        current.merge(id, 1L, Long::sum);
    }

    /** The sandbox is gone for good: forget it (a reused id would start over, which is harmless: ids are random). */
    void forget(SandboxId id) {
        current.remove(id);
    }

    boolean isCurrent(Tag tag) {
        return current.getOrDefault(tag.sandbox(), 0L) == tag.generation();
    }
}
