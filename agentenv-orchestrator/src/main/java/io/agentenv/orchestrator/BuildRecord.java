package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.TemplateId;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * One build of a template.
 *
 * @param id     a UUID, as E2B's build ids are
 * @param reason why it failed (ERROR only)
 * @param step   the step that failed, as E2B names it (its 1-based index), when one did
 * @param tags     the tags the build was requested with (they name it once it is ready)
 * @param snapshot the catalog snapshot a ready build became; kept after the snapshot is deleted, so that sandboxes
 *                 created from it can still be traced to the template
 */
public record BuildRecord(
        String id,
        TemplateId template,
        Status status,
        Optional<String> reason,
        Optional<String> step,
        List<String> tags,
        Instant createdAt,
        Instant updatedAt,
        Optional<TemplateId> snapshot) {

    /** E2B's build states: requested (not started), running, done, failed. */
    public enum Status {
        WAITING,
        BUILDING,
        READY,
        ERROR;

        public boolean finished() {
            return this == READY || this == ERROR;
        }
    }

    public BuildRecord {
        requireNonNull(id, "id is null");
        requireNonNull(template, "template is null");
        requireNonNull(status, "status is null");
        requireNonNull(reason, "reason is null");
        requireNonNull(step, "step is null");
        tags = List.copyOf(tags);
        requireNonNull(createdAt, "createdAt is null");
        requireNonNull(updatedAt, "updatedAt is null");
        requireNonNull(snapshot, "snapshot is null");
    }

    /** A build that has not become a snapshot (yet). */
    public BuildRecord(
            String id,
            TemplateId template,
            Status status,
            Optional<String> reason,
            Optional<String> step,
            List<String> tags,
            Instant createdAt,
            Instant updatedAt) {
        this(id, template, status, reason, step, tags, createdAt, updatedAt, Optional.empty());
    }

    /** This build, recorded as having become {@code captured}. */
    public BuildRecord withSnapshot(TemplateId captured, Instant at) {
        return new BuildRecord(id, template, status, reason, step, tags, createdAt, at, Optional.of(captured));
    }

    BuildRecord with(Status next, Optional<String> why, Optional<String> failedStep, Instant at) {
        return new BuildRecord(id, template, next, why, failedStep, tags, createdAt, at, snapshot);
    }
}
