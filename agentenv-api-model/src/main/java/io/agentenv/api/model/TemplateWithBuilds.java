package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/**
 * E2B schema {@code TemplateWithBuilds} ({@code GET /templates/{templateID}}). Field meanings as in {@link Template};
 * {@code lastSpawnedAt} is always null and {@code spawnCount} is not sent (template usage is not recorded).
 */
public record TemplateWithBuilds(
        @JsonProperty("templateID") String templateID,
        @JsonProperty("public") boolean isPublic,
        List<String> aliases,
        List<String> names,
        Instant createdAt,
        Instant updatedAt,
        List<TemplateBuild> builds) {

    public TemplateWithBuilds {
        requireNonNull(templateID, "templateID is null");
        aliases = List.copyOf(aliases);
        names = List.copyOf(names);
        builds = List.copyOf(builds);
    }

    /** Sent as null: template usage is not recorded. */
    @JsonProperty("lastSpawnedAt")
    public Instant lastSpawnedAt() {
        return null;
    }
}
