package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonProperty;

/** E2B schema {@code TemplateAliasResponse} ({@code GET /templates/aliases/{alias}}). */
public record TemplateAliasResponse(
        @JsonProperty("templateID") String templateID,
        @JsonProperty("public") boolean isPublic) {
    public TemplateAliasResponse {
        requireNonNull(templateID, "templateID is null");
    }
}
