package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/** E2B schema {@code TemplateStep}: RUN, COPY, ENV, WORKDIR or USER with its arguments. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record TemplateStep(String type, List<String> args, String filesHash, Boolean force) {
    public TemplateStep {
        if (type == null || type.isBlank()) {
            throw new IllegalArgumentException("a step needs a type");
        }
        args = args == null ? List.of() : List.copyOf(args);
    }
}
