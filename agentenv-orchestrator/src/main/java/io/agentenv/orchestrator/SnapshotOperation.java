package io.agentenv.orchestrator;

import static java.util.Objects.requireNonNull;

import io.agentenv.spi.SandboxId;
import io.agentenv.spi.SnapshotState;
import io.agentenv.spi.TemplateId;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Snapshots into the catalog, and the catalog's list and delete. */
final class SnapshotOperation {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,128}");
    private static final Logger log = LoggerFactory.getLogger(SnapshotOperation.class);

    private final Captures captures;

    private final TemplateCatalog templates;
    private final Records records;
    private final Ids ids;
    private final Artifacts artifacts;
    private final EventBus events;
    private final Clock clock;

    SnapshotOperation(
            Captures captures,
            TemplateCatalog templates,
            Records records,
            Ids ids,
            Artifacts artifacts,
            EventBus events,
            Clock clock) {
        this.captures = requireNonNull(captures, "captures is null");
        this.templates = requireNonNull(templates, "templates is null");
        this.records = requireNonNull(records, "records is null");
        this.ids = requireNonNull(ids, "ids is null");
        this.artifacts = requireNonNull(artifacts, "artifacts is null");
        this.events = requireNonNull(events, "events is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    void validate(Optional<String> name) {
        if (name.isEmpty()) {
            return;
        }
        if (!NAME.matcher(name.get()).matches()) {
            throw AgentEnvException.invalidArgument("snapshot name must be 1-128 letters, digits, '_' or '-'");
        }
        if (templates.builtIn(name.get()).isPresent()) {
            throw AgentEnvException.invalidArgument("snapshot name " + name.get() + " is a built-in template");
        }
    }

    SnapshotView snapshot(SandboxId id, Optional<String> name) {
        validate(name);
        return capture(id, name.map(List::of).orElse(List.of()), Map.of(), Optional.empty());
    }

    /**
     * Captures {@code id} with {@code aliases} (each moved from a snapshot that had it) and {@code extraEnv} over the
     * source's environment as the default environment of the sandboxes created from it.
     */
    SnapshotView capture(
            SandboxId id, List<String> aliases, Map<String, String> extraEnv, Optional<GuestDefaults> defaults) {
        aliases.forEach(alias -> validate(Optional.of(alias)));
        SandboxRecord source = captures.acquire(id, SandboxState.SNAPSHOTTING, "be snapshotted");
        TemplateId snapshotId = ids.newSnapshotId();
        Path dir;
        try {
            dir = artifacts.snapshotDir(snapshotId);
        } catch (AgentEnvException e) {
            captures.release(id, SandboxState.SNAPSHOTTING);
            throw e;
        }
        SnapshotState state = captures.capture(id, SandboxState.SNAPSHOTTING, dir);
        try {
            artifacts.share(dir); // before the catalog names it: any node may then start it
        } catch (IOException | RuntimeException e) {
            artifacts.delete(dir);
            captures.release(id, SandboxState.SNAPSHOTTING);
            throw new AgentEnvException(
                    ErrorKind.UPSTREAM_FAILED,
                    "storing the snapshot of sandbox " + id + " in shared storage failed",
                    e);
        }
        Instant now = clock.instant();
        SnapshotRecord record = new SnapshotRecord(
                snapshotId,
                aliases,
                Optional.of(id),
                source.template(),
                TemplateCatalog.merged(source.envVars(), extraEnv),
                state.resources(),
                new StoredState(state.encode(), dir),
                now,
                now,
                source.customExtensionParams(),
                defaults.orElse(source.guestDefaults()),
                source.volumes());
        try {
            records.store().insertSnapshot(record);
        } catch (RuntimeException e) {
            artifacts.delete(dir);
            captures.release(id, SandboxState.SNAPSHOTTING);
            throw e;
        }
        captures.release(id, SandboxState.SNAPSHOTTING);
        log.atInfo()
                .addKeyValue("sandbox_id", id.value())
                .addKeyValue("snapshot_id", snapshotId.value())
                .log("snapshot taken");
        events.publish(new LifecycleEvent.SnapshotTaken(id, clock.instant(), snapshotId));
        return record.view();
    }

    Page<SnapshotView> list(SnapshotQuery query) {
        Page<SnapshotRecord> page = records.store().listSnapshots(query);
        return new Page<>(page.items().stream().map(SnapshotRecord::view).toList(), page.next());
    }

    boolean delete(String idOrAlias) {
        requireNonNull(idOrAlias, "idOrAlias is null");
        if (templates.builtIn(idOrAlias).isPresent()) {
            throw AgentEnvException.invalidArgument("built-in template " + idOrAlias + " cannot be deleted");
        }
        Optional<SnapshotRecord> snapshot = records.store().findSnapshot(idOrAlias);
        if (snapshot.isEmpty() || !records.store().deleteSnapshot(snapshot.get().id())) {
            return false;
        }
        artifacts.deleteState(snapshot.get().state().artifactDir());
        templates.snapshotDeleted(snapshot.get().id());
        log.atInfo().addKeyValue("snapshot_id", snapshot.get().id().value()).log("snapshot deleted");
        return true;
    }
}
