package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/** E2B schema {@code DeleteTemplateTagsRequest} ({@code DELETE /templates/tags}): a template name and its tags. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record DeleteTemplateTagsRequest(String name, List<String> tags) {
    public DeleteTemplateTagsRequest {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("name is required");
        }
        tags = tags == null ? List.of() : List.copyOf(tags);
    }
}
