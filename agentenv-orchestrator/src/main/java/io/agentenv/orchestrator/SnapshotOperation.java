package io.agentenv.orchestrator;

import io.agentenv.spi.SandboxId;
import io.agentenv.spi.SnapshotState;
import io.agentenv.spi.TemplateId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

import static java.util.Objects.requireNonNull;

/** Snapshots into the catalog, and the catalog's list and delete. */
final class SnapshotOperation {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,128}");
    private static final Logger log = LoggerFactory.getLogger(SnapshotOperation.class);

    private final OperationContext ctx;
    private final Captures captures;

    SnapshotOperation(OperationContext ctx, Captures captures) {
        this.ctx = requireNonNull(ctx, "ctx is null");
        this.captures = requireNonNull(captures, "captures is null");
    }

    void validate(Optional<String> name) {
        if (name.isEmpty()) {
            return;
        }
        if (!NAME.matcher(name.get()).matches()) {
            throw AgentEnvException.invalidArgument("snapshot name must be 1-128 letters, digits, '_' or '-'");
        }
        if (ctx.templates.builtIn(name.get()).isPresent()) {
            throw AgentEnvException.invalidArgument("snapshot name " + name.get() + " is a built-in template");
        }
    }

    SnapshotView snapshot(SandboxId id, Optional<String> name) {
        validate(name);
        SandboxRecord source = captures.acquire(id, SandboxState.SNAPSHOTTING, "be snapshotted");
        TemplateId snapshotId = ctx.ids.newSnapshotId();
        Path dir;
        try {
            dir = ctx.artifacts.snapshotDir(snapshotId);
        } catch (AgentEnvException e) {
            captures.release(id, SandboxState.SNAPSHOTTING);
            throw e;
        }
        SnapshotState state = captures.capture(id, SandboxState.SNAPSHOTTING, dir);
        Instant now = ctx.now();
        SnapshotRecord record = new SnapshotRecord(snapshotId, name.map(List::of).orElse(List.of()), Optional.of(id),
                source.template(), source.envVars(), state.resources(), new StoredState(state.encode(), dir), now, now,
                source.customExtensionParams());
        try {
            ctx.records.store().insertSnapshot(record);
        } catch (RuntimeException e) {
            ctx.artifacts.delete(dir);
            captures.release(id, SandboxState.SNAPSHOTTING);
            throw e;
        }
        captures.release(id, SandboxState.SNAPSHOTTING);
        log.atInfo().addKeyValue("sandbox_id", id.value()).addKeyValue("snapshot_id", snapshotId.value())
                .log("snapshot taken");
        ctx.events.publish(new LifecycleEvent.SnapshotTaken(id, ctx.now(), snapshotId));
        return record.view();
    }

    Page<SnapshotView> list(SnapshotQuery query) {
        Page<SnapshotRecord> page = ctx.records.store().listSnapshots(query);
        return new Page<>(page.items().stream().map(SnapshotRecord::view).toList(), page.next());
    }

    boolean delete(String idOrAlias) {
        requireNonNull(idOrAlias, "idOrAlias is null");
        if (ctx.templates.builtIn(idOrAlias).isPresent()) {
            throw AgentEnvException.invalidArgument("built-in template " + idOrAlias + " cannot be deleted");
        }
        Optional<SnapshotRecord> snapshot = ctx.records.store().findSnapshot(idOrAlias);
        if (snapshot.isEmpty() || !ctx.records.store().deleteSnapshot(snapshot.get().id())) {
            return false;
        }
        ctx.artifacts.delete(snapshot.get().state().artifactDir());
        log.atInfo().addKeyValue("snapshot_id", snapshot.get().id().value()).log("snapshot deleted");
        return true;
    }
}
