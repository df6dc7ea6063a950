package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.Resources;
import io.agentenv.spi.TemplateId;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Something sandboxes are created from, as the template routes show it: a backend's built-in template or a snapshot
 * of the catalog.
 *
 * @param aliases   the names that resolve to it (a built-in template's own name; a snapshot's aliases, possibly none)
 * @param createdAt when it was built; empty when the backend does not know for a built-in template
 * @param updatedAt when it last changed (a built-in template: its current build; a snapshot: its record)
 */
public record TemplateView(
        TemplateId id,
        Source source,
        List<String> aliases,
        Resources resources,
        Optional<Instant> createdAt,
        Optional<Instant> updatedAt) {
    /** Where a template comes from. */
    public enum Source {
        /** Booted by the backend without a snapshot (for example {@code base}); not deletable. */
        BUILT_IN,
        /** Captured from a sandbox ({@code POST /sandboxes/{id}/snapshots}); listed by GET /snapshots. */
        SNAPSHOT
    }

    public TemplateView {
        requireNonNull(id, "id is null");
        requireNonNull(source, "source is null");
        aliases = List.copyOf(aliases);
        requireNonNull(resources, "resources is null");
        requireNonNull(createdAt, "createdAt is null");
        requireNonNull(updatedAt, "updatedAt is null");
    }
}
