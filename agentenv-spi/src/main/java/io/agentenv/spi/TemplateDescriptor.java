package io.agentenv.spi;

import static java.util.Objects.requireNonNull;

/** A template the backend can boot without a snapshot (for example {@code base}), with the resources it gets. */
public record TemplateDescriptor(TemplateId id, Resources resources) {
    public TemplateDescriptor {
        requireNonNull(id, "id is null");
        requireNonNull(resources, "resources is null");
    }
}
