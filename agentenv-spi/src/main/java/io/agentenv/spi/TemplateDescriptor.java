package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.Optional;

/**
 * A template the backend can boot without a snapshot (for example {@code base}), with the resources it gets.
 *
 * @param builtAt when the backend's current build of it was made, if the backend knows (reported as the template's
 *                createdAt/updatedAt by the API)
 */
public record TemplateDescriptor(TemplateId id, Resources resources, Optional<Instant> builtAt) {
    public TemplateDescriptor {
        requireNonNull(id, "id is null");
        requireNonNull(resources, "resources is null");
        requireNonNull(builtAt, "builtAt is null");
    }

    /** A template whose build time the backend does not know. */
    public TemplateDescriptor(TemplateId id, Resources resources) {
        this(id, resources, Optional.empty());
    }
}
