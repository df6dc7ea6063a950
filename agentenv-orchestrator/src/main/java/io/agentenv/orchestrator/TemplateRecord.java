package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.Resources;
import io.agentenv.spi.TemplateId;
import java.time.Instant;
import java.util.List;

/**
 * A template requested through the build API (E2B's {@code POST /v3/templates}). Its builds run in sandboxes; a ready
 * build becomes a catalog snapshot whose aliases are the template's id and names, so a sandbox is created from it by
 * either.
 *
 * @param names     the names it is known by (unique among templates and snapshot aliases); may be empty
 * @param resources what its build sandboxes and its sandboxes get
 */
public record TemplateRecord(
        TemplateId id, List<String> names, Resources resources, Instant createdAt, Instant updatedAt) {
    public TemplateRecord {
        requireNonNull(id, "id is null");
        names = List.copyOf(names);
        requireNonNull(resources, "resources is null");
        requireNonNull(createdAt, "createdAt is null");
        requireNonNull(updatedAt, "updatedAt is null");
    }
}
