package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.Resources;
import io.agentenv.spi.SandboxId;
import io.agentenv.spi.TemplateId;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A catalog entry that sandboxes can be created from (E2B: a snapshot is a template id).
 *
 * @param names         its aliases (possibly empty); an alias always names the newest snapshot given that name
 * @param sourceSandbox the sandbox it was captured from
 */
public record SnapshotView(
        TemplateId id,
        List<String> names,
        Optional<SandboxId> sourceSandbox,
        Resources resources,
        Instant createdAt,
        Instant updatedAt) {
    public SnapshotView {
        requireNonNull(id, "id is null");
        names = List.copyOf(names);
        requireNonNull(sourceSandbox, "sourceSandbox is null");
        requireNonNull(resources, "resources is null");
        requireNonNull(createdAt, "createdAt is null");
        requireNonNull(updatedAt, "updatedAt is null");
    }
}
