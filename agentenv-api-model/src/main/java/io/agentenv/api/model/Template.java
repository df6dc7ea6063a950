package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/**
 * E2B schema {@code Template} ({@code GET /templates}, {@code GET /v2/templates}). A built-in template has exactly one
 * build, so {@code buildID} equals {@code templateID} and {@code buildCount} is 1; a template of the build API has its
 * latest ready build's id (its latest build's while none is ready) and the status of its latest build. {@code createdAt}/{@code updatedAt} are
 * null when the backend does not know when its template was built; E2B's fields lastSpawnedAt and createdBy are
 * always null and {@code spawnCount} is not sent, because this server does not record template usage or users.
 *
 * @param aliases the names it can be created by (E2B's deprecated field; {@code aenv templates} prints it)
 * @param names   the aliases, or the id when it has none
 */
public record Template(
        @JsonProperty("templateID") String templateID,
        @JsonProperty("buildID") String buildID,
        int cpuCount,
        @JsonProperty("memoryMB") int memoryMB,
        @JsonProperty("diskSizeMB") int diskSizeMB,
        @JsonProperty("public") boolean isPublic,
        List<String> aliases,
        List<String> names,
        Instant createdAt,
        Instant updatedAt,
        int buildCount,
        String envdVersion,
        TemplateBuildStatus buildStatus) {

    public Template {
        requireNonNull(templateID, "templateID is null");
        requireNonNull(buildID, "buildID is null");
        aliases = List.copyOf(aliases);
        names = List.copyOf(names);
        requireNonNull(envdVersion, "envdVersion is null");
        requireNonNull(buildStatus, "buildStatus is null");
    }

    /** Sent as null: template usage is not recorded. */
    @JsonProperty("lastSpawnedAt")
    public Instant lastSpawnedAt() {
        return null;
    }

    /** Sent as null: this server has no team users. */
    @JsonProperty("createdBy")
    public Object createdBy() {
        return null;
    }
}
