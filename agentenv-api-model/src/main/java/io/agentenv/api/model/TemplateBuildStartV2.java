package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * E2B schema {@code TemplateBuildStartV2} ({@code POST /v2/templates/{templateID}/builds/{buildID}}): exactly one of
 * {@code fromImage} and {@code fromTemplate}; {@code fromImageRegistry} holds credentials for the image's registry.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record TemplateBuildStartV2(
        String fromImage,
        FromImageRegistry fromImageRegistry,
        String fromTemplate,
        List<TemplateStep> steps,
        String startCmd,
        String readyCmd,
        Boolean force) {
    public TemplateBuildStartV2 {
        steps = steps == null ? List.of() : List.copyOf(steps);
    }
}
