package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.TemplateId;
import java.time.Instant;

/**
 * A tag of a template: the name of one of its ready builds, so that {@code name:tag} creates sandboxes from that build.
 * Assigning the tag again moves it to another build.
 *
 * @param assignedAt when the tag was last pointed at its build
 */
public record TagAssignment(TemplateId template, String tag, String buildId, Instant assignedAt) {
    public TagAssignment {
        requireNonNull(template, "template is null");
        requireNonNull(tag, "tag is null");
        requireNonNull(buildId, "buildId is null");
        requireNonNull(assignedAt, "assignedAt is null");
    }
}
