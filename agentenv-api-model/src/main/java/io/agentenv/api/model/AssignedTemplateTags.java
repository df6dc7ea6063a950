package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** E2B schema {@code AssignedTemplateTags} ({@code POST /templates/tags}): the build the tags now name. */
public record AssignedTemplateTags(@JsonProperty("buildID") String buildID, List<String> tags) {
    public AssignedTemplateTags {
        requireNonNull(buildID, "buildID is null");
        tags = List.copyOf(tags);
    }
}
