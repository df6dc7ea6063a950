package io.agentenv.api.model;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** E2B schema {@code TemplateRequestResponseV3}: the template and the build just requested. */
public record TemplateRequestResponseV3(
        @JsonProperty("templateID") String templateID,
        @JsonProperty("buildID") String buildID,
        List<String> aliases,
        List<String> names,
        List<String> tags,
        @JsonProperty("public") boolean isPublic) {
    public TemplateRequestResponseV3 {
        requireNonNull(templateID, "templateID is null");
        requireNonNull(buildID, "buildID is null");
        aliases = List.copyOf(aliases);
        names = List.copyOf(names);
        tags = List.copyOf(tags);
    }
}
