package io.agentenv.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * E2B schema {@code TemplateBuildFileUpload}: whether the files of a COPY step's hash are there already, and where to
 * upload them (with a PUT of their tar archive) when they are not, or to replace them.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TemplateBuildFileUpload(boolean present, String url) {}
