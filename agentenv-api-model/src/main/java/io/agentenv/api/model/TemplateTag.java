package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;

/** E2B schema {@code TemplateTag} ({@code GET /templates/{templateID}/tags}): a tag, its build, when it was assigned. */
public record TemplateTag(
        String tag, @JsonProperty("buildID") String buildID, Instant createdAt) {
    public TemplateTag {
        requireNonNull(tag, "tag is null");
        requireNonNull(buildID, "buildID is null");
        requireNonNull(createdAt, "createdAt is null");
    }
}
