package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * E2B schema {@code AssignTemplateTagsRequest} ({@code POST /templates/tags}): {@code tags} go to the build
 * {@code target} names ({@code name}, {@code name:tag} or {@code name:buildID}).
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record AssignTemplateTagsRequest(String target, List<String> tags) {
    public AssignTemplateTagsRequest {
        if (target == null || target.isBlank()) {
            throw new IllegalArgumentException("target is required");
        }
        tags = tags == null ? List.of() : List.copyOf(tags);
    }
}
